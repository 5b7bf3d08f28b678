import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import { GidFactory } from "@geo/txn";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prefixFor } from "../src/distributed/txn-service.js";
import { regionsToml } from "./support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "./support/move-regions.js";
import { ProxyChild } from "./support/proxy-child.js";

// Two proxies (real processes) sharing the table decision log in the home region: each one's
// recovery settles its own decisions only, never another live proxy's.
let cluster: PgCluster;
let direct: Awaited<ReturnType<typeof connectDirect>>;
let folder: string;
let directoryFile: string;
const running: ProxyChild[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  folder = await mkdtemp(join(tmpdir(), "geo-shared-log-"));
  directoryFile = join(folder, "keys.tsv");
  await writeFile(directoryFile, "alice\teu-west\nbob\tus-east\n");
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => child.stop()));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

async function launch(node: string, txn: string): Promise<ProxyChild> {
  const data = await mkdtemp(join(folder, "txn-"));
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    `\n[txn]\ndata_dir = "${data}"\ndecision_log = "table"\n${txn}\n`,
  ).replace("[server]\n", `[server]\nnode = "${node}"\n`);
  const configPath = join(data, "geoproxy.toml");
  await writeFile(configPath, toml);
  const child = new ProxyChild(["--config", configPath, "--directory", directoryFile, "--log-level", "info"]);
  running.push(child);
  return child;
}

async function pendingDecision(gid: string): Promise<boolean> {
  const result = await direct["eu-west"].query(
    "SELECT count(*)::int AS n FROM geo_txn_decisions WHERE gid = $1 AND completed_at IS NULL",
    [gid],
  );
  return result.rows[0].n === 1;
}

async function prepared(gid: string): Promise<boolean> {
  const result = await direct["us-east"].query(
    "SELECT count(*)::int AS n FROM pg_prepared_xacts WHERE gid = $1",
    [gid],
  );
  return result.rows[0].n === 1;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a decision log shared by two proxies", () => {
  it("leaves another live proxy's decided commit alone, so that proxy still commits it after a restart", async () => {
    // The keeper decided to commit a transaction over eu-west and us-east and committed eu-west's
    // part; us-east's is still prepared. It recovers only at start (its interval is an hour).
    const keeper = await launch("keeper", "recovery_interval_ms = 3600000");
    await keeper.listening();
    const gid = new GidFactory(prefixFor("keeper")).next(Date.now() - 60_000);
    await direct["us-east"].query("BEGIN");
    await direct["us-east"].query(
      "INSERT INTO users (tenant_id, id, name) VALUES ('bob', 4242, 'committed')",
    );
    await direct["us-east"].query(`PREPARE TRANSACTION '${gid}'`);
    await direct["eu-west"].query(
      "INSERT INTO geo_txn_decisions (gid, decision, participants, decided_at) VALUES ($1, 'commit', ARRAY['eu-west', 'us-east'], now() - interval '1 minute')",
      [gid],
    );

    // Another proxy over the same log, recovering every 200 ms, for several passes.
    const sweeper = await launch(
      "sweeper",
      "recovery_interval_ms = 200\nrecovery_grace_ms = 300\ndecide_deadline_ms = 200",
    );
    await sweeper.listening();
    await sleep(1_500);
    expect(await pendingDecision(gid)).toBe(true);
    expect(await prepared(gid)).toBe(true);

    // The keeper restarts: its recovery reads its decision and commits us-east's part.
    await keeper.stop();
    const again = await launch("keeper", "recovery_interval_ms = 3600000");
    await again.listening();
    for (let i = 0; i < 100 && (await prepared(gid)); i++) await sleep(50);
    expect(await prepared(gid)).toBe(false);
    const rows = await direct["us-east"].query(
      "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 4242",
    );
    expect(rows.rows).toEqual([{ name: "committed" }]);
  });
});
