import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import { FileDecisionLog, GidFactory } from "@geo/txn";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefixFor } from "../src/distributed/txn-service.js";
import { type RunningProxy, startProxy } from "../src/index.js";
import { KEYS, REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";

const schema = readFileSync(fileURLToPath(new URL("../../../examples/schema.sql", import.meta.url)), "utf8");

let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
let folder: string;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: schema });
  direct = {} as Record<RegionName, pg.Client>;
  for (const [i, region] of REGIONS.entries()) {
    const server = cluster.servers[i]!;
    const client = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    direct[region] = client;
  }
  folder = await mkdtemp(join(tmpdir(), "geo-in-doubt-"));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

/** Every default of `[txn]` but the decision log's place, and this node's name. */
function configFor(node: string, txn: string) {
  const toml = regionsToml(
    cluster.servers.map((server) => server.port),
    `\n[txn]\n${txn}\n`,
  ).replace(
    '[server]\nhost = "127.0.0.1"\nport = 0\n',
    `[server]\nhost = "127.0.0.1"\nport = 0\nnode = "${node}"\n`,
  );
  return parseConfig(toml, "in-doubt.toml");
}

async function start(node: string, txn: string): Promise<RunningProxy> {
  return startProxy({
    config: configFor(node, txn),
    directory: new MemoryDirectory(Object.entries(KEYS)),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
}

/** What a crashed coordinator leaves: the writes done and PREPAREd in each region, nothing decided. */
async function leavePrepared(gid: string, writes: Partial<Record<RegionName, string>>): Promise<void> {
  for (const [region, sql] of Object.entries(writes) as [RegionName, string][]) {
    const client = direct[region];
    await client.query("BEGIN");
    await client.query(sql);
    await client.query(`PREPARE TRANSACTION '${gid}'`);
  }
}

async function preparedIn(region: RegionName): Promise<string[]> {
  const result = await direct[region].query("SELECT gid FROM pg_prepared_xacts ORDER BY gid");
  return result.rows.map((row) => row.gid as string);
}

async function namesOf(region: RegionName, key: string, id: number): Promise<string[]> {
  const result = await direct[region].query("SELECT name FROM users WHERE tenant_id = $1 AND id = $2", [
    key,
    id,
  ]);
  return result.rows.map((row) => row.name as string);
}

/** Whether the row can be locked now, or an undecided prepared transaction still holds it. */
async function rowIsFree(region: RegionName, key: string, id: number): Promise<boolean> {
  const client = direct[region];
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL lock_timeout = '200ms'");
    await client.query("SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2 FOR UPDATE", [key, id]);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "55P03") return false;
    throw error;
  } finally {
    await client.query("ROLLBACK");
  }
}

describe("in-doubt transactions a crashed proxy left behind", () => {
  it("with the file log: a restart that finds its own pid in the stale lock commits what was decided and rolls back the rest before it serves", async () => {
    const node = "crashy";
    const gids = new GidFactory(prefixFor(node));
    const logPath = join(folder, "crashy.decisions.log");
    await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 1, 'b-1')");

    // The previous life: one transaction decided to commit, one prepared and never decided (it
    // holds bob's row 1), and it died without closing its log.
    const decided = gids.next();
    const undecided = gids.next();
    await leavePrepared(decided, {
      "eu-west": "INSERT INTO users (tenant_id, id, name) VALUES ('alice', 10, 'a-10')",
      "us-east": "INSERT INTO users (tenant_id, id, name) VALUES ('bob', 10, 'b-10')",
    });
    await leavePrepared(undecided, {
      "us-east": "UPDATE users SET name = 'b-1 changed' WHERE tenant_id = 'bob' AND id = 1",
      "ap-south": "INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 11, 'c-11')",
    });
    const log = await FileDecisionLog.open({ path: logPath });
    await log.decide({
      gid: decided,
      decision: "commit",
      participants: ["eu-west", "us-east"],
      decidedAt: Date.now(),
    });
    await log.close();
    // Its lock names this very pid, as a proxy running as pid 1 in a container finds after a crash.
    const staleLock = JSON.stringify({
      v: 2,
      pid: process.pid,
      host: "previous-life",
      token: randomBytes(16).toString("hex"),
    });
    await writeFile(`${logPath}.lock`, staleLock);

    // Another node's transactions, undecided and as old: never this node's to settle.
    const otherNode = new GidFactory(prefixFor("othernode")).next();
    const extendsOurPrefix = new GidFactory(`${prefixFor(node)}_b`).next();
    await leavePrepared(otherNode, {
      "eu-west": "INSERT INTO users (tenant_id, id, name) VALUES ('alice', 12, 'a-12')",
    });
    await leavePrepared(extendsOurPrefix, {
      "us-east": "INSERT INTO users (tenant_id, id, name) VALUES ('bob', 13, 'b-13')",
    });
    expect(await rowIsFree("us-east", "bob", 1)).toBe(false);

    const proxy = await start(node, `log_path = "${logPath}"`);
    try {
      // Settled by the start-up pass, which ran before the proxy took its first client.
      expect(await preparedIn("eu-west")).toEqual([otherNode]);
      expect(await preparedIn("us-east")).toEqual([extendsOurPrefix]);
      expect(await preparedIn("ap-south")).toEqual([]);
      expect(await namesOf("eu-west", "alice", 10)).toEqual(["a-10"]);
      expect(await namesOf("us-east", "bob", 10)).toEqual(["b-10"]);
      expect(await namesOf("us-east", "bob", 1)).toEqual(["b-1"]);
      expect(await namesOf("ap-south", "chandra", 11)).toEqual([]);
      expect(await rowIsFree("us-east", "bob", 1)).toBe(true);

      const lock = JSON.parse(await readFile(`${logPath}.lock`, "utf8")) as { pid: number; token: string };
      expect(lock.pid).toBe(process.pid);
      expect(lock.token).not.toBe(JSON.parse(staleLock).token);

      // And writes across regions work: the log is open, not refused with 55000.
      const client = new pg.Client({
        host: "127.0.0.1",
        port: proxy.port,
        user: "postgres",
        database: "shop",
      });
      await client.connect();
      try {
        await client.query("BEGIN");
        await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 14, 'a-14')");
        await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 14, 'b-14')");
        await client.query("COMMIT");
      } finally {
        await client.end().catch(() => undefined);
      }
      expect(await namesOf("eu-west", "alice", 14)).toEqual(["a-14"]);
      expect(await namesOf("us-east", "bob", 14)).toEqual(["b-14"]);

      // Later passes leave the other nodes' transactions alone too.
      await proxy.runtime.txn.recoverNow();
      expect(await preparedIn("eu-west")).toEqual([otherNode]);
      expect(await preparedIn("us-east")).toEqual([extendsOurPrefix]);
    } finally {
      await proxy.close({ timeoutMs: 200 });
      await direct["eu-west"].query(`ROLLBACK PREPARED '${otherNode}'`);
      await direct["us-east"].query(`ROLLBACK PREPARED '${extendsOurPrefix}'`);
    }
  });

  it("with the table log: a restart rolls back what the previous run left undecided before it serves, once it holds the node claim", async () => {
    const node = "tablecrash";
    const gids = new GidFactory(prefixFor(node));
    const undecided = gids.next();
    const otherNode = new GidFactory(prefixFor("othernode")).next();
    await direct["us-east"].query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 2, 'b-2')");
    await leavePrepared(undecided, {
      "us-east": "UPDATE users SET name = 'b-2 changed' WHERE tenant_id = 'bob' AND id = 2",
      "ap-south": "INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 20, 'c-20')",
    });
    await leavePrepared(otherNode, {
      "us-east": "INSERT INTO users (tenant_id, id, name) VALUES ('bob', 21, 'b-21')",
    });
    expect(await rowIsFree("us-east", "bob", 2)).toBe(false);

    const started = Date.now();
    const proxy = await start(node, 'decision_log = "table"');
    try {
      // Younger than the grace period (10 s), yet settled by the start-up pass: holding the node's
      // claim in every region proves the run that issued it can no longer decide it.
      console.log(
        `table log: the restart settled the previous run's transaction ${Date.now() - started} ms after it began`,
      );
      expect(await preparedIn("us-east")).toEqual([otherNode]);
      expect(await preparedIn("ap-south")).toEqual([]);
      expect(await namesOf("us-east", "bob", 2)).toEqual(["b-2"]);
      expect(await namesOf("ap-south", "chandra", 20)).toEqual([]);
      expect(await rowIsFree("us-east", "bob", 2)).toBe(true);
      // The abort is recorded first, so a late coordinator of that run would read it back.
      const home = await direct["eu-west"].query("SELECT decision FROM geo_txn_decisions WHERE gid = $1", [
        undecided,
      ]);
      expect(home.rows).toEqual([{ decision: "abort" }]);

      // A transaction of this run, prepared and undecided, is not the previous run's: it waits out
      // the grace period.
      const ours = new GidFactory(prefixFor(node)).next();
      await leavePrepared(ours, {
        "ap-south": "INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 22, 'c-22')",
      });
      await proxy.runtime.txn.recoverNow();
      expect(await preparedIn("ap-south")).toEqual([ours]);
      await direct["ap-south"].query(`ROLLBACK PREPARED '${ours}'`);
    } finally {
      await proxy.close({ timeoutMs: 200 });
      await direct["us-east"].query(`ROLLBACK PREPARED '${otherNode}'`);
    }
  }, 30_000);
});
