import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PgCluster, startCluster } from "@geo/testkit";
import { claimKey, GidFactory } from "@geo/txn";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prefixFor } from "../src/distributed/txn-service.js";
import { KEYS, REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";

/** The built command line: these proxies are real processes, so one can be killed with SIGKILL. */
const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const schema = readFileSync(fileURLToPath(new URL("../../../examples/schema.sql", import.meta.url)), "utf8");

let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
let folder: string;
let directoryFile: string;
const running: ProxyChild[] = [];
let nextId = 1;

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
  folder = await mkdtemp(join(tmpdir(), "geo-node-claim-"));
  directoryFile = join(folder, "keys.tsv");
  await writeFile(
    directoryFile,
    Object.entries(KEYS)
      .map(([key, region]) => `${key}\t${region}\n`)
      .join(""),
  );
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((child) => child.stop()));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

type Outcome =
  | { readonly listening: number }
  | { readonly exited: number | null; readonly signal: string | null };

/** `geoproxy serve` in a process of its own, over the three servers. */
class ProxyChild {
  readonly child: ChildProcess;
  stderr = "";
  private stdout = "";
  private readonly outcome: Promise<Outcome>;
  readonly exited: Promise<void>;

  constructor(configPath: string) {
    this.child = spawn(
      process.execPath,
      [CLI, "serve", "--config", configPath, "--directory", directoryFile, "--log-level", "info"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.outcome = new Promise<Outcome>((resolve) => {
      this.child.stdout!.on("data", (data: Buffer) => {
        this.stdout += data.toString();
        const port = /"port":(\d+)[^\n]*"msg":"geoproxy listening"/.exec(this.stdout)?.[1];
        if (port !== undefined) resolve({ listening: Number(port) });
      });
      this.child.stderr!.on("data", (data: Buffer) => {
        this.stderr += data.toString();
      });
      this.child.once("exit", (code, signal) => resolve({ exited: code, signal }));
    });
  }

  /** The port once it listens; rejects, with what it printed, if it exits first. */
  async port(): Promise<number> {
    const outcome = await this.outcome;
    if ("listening" in outcome) return outcome.listening;
    throw new Error(`geoproxy exited with ${outcome.exited}: ${this.stderr}`);
  }

  /** The exit status, when it exits at start; rejects if it starts listening instead. */
  async exitCode(): Promise<number | null> {
    const outcome = await this.outcome;
    if ("exited" in outcome) return outcome.exited;
    throw new Error(`geoproxy started on port ${outcome.listening}`);
  }

  async kill(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    await this.exited;
  }
}

/** A proxy over the three servers; `node` absent leaves `[server] node` at its default. */
async function launch(node: string | undefined, txn = ""): Promise<ProxyChild> {
  const server = node === undefined ? "[server]\n" : `[server]\nnode = "${node}"\n`;
  const data = await mkdtemp(join(folder, "txn-"));
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    `\n[txn]\ndata_dir = "${data}"\n${txn}\n`,
  ).replace("[server]\n", server);
  const configPath = join(data, "geoproxy.toml");
  await writeFile(configPath, toml);
  const child = new ProxyChild(configPath);
  running.push(child);
  return child;
}

async function client(port: number): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  await c.connect();
  return c;
}

/** One transaction writing alice's row in eu-west and bob's in us-east: a two-phase commit. */
async function writeAcross(c: pg.Client): Promise<number> {
  const id = nextId++;
  await c.query("BEGIN");
  try {
    await c.query(
      `INSERT INTO users (tenant_id, id, name) VALUES ('alice', ${id}, 'a'), ('bob', ${id}, 'b')`,
    );
    await c.query("COMMIT");
  } catch (error) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
  return id;
}

async function rowsWithId(id: number): Promise<number> {
  let count = 0;
  for (const region of ["eu-west", "us-east"] as const) {
    const result = await direct[region].query("SELECT count(*)::int AS n FROM users WHERE id = $1", [id]);
    count += result.rows[0].n as number;
  }
  return count;
}

async function preparedIn(region: RegionName): Promise<string[]> {
  return (await direct[region].query("SELECT gid FROM pg_prepared_xacts ORDER BY gid")).rows.map(
    (row) => row.gid as string,
  );
}

/** The claim sessions of a node in a region: pids of the sessions named after it. */
async function claimSessions(region: RegionName, node: string): Promise<number[]> {
  const result = await direct[region].query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
    `geoproxy node ${node}`,
  ]);
  return result.rows.map((row) => row.pid as number);
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

function refusalLines(stderr: string): string[] {
  return stderr
    .trim()
    .split("\n")
    .filter((line) => line.includes("is in use"));
}

describe("several proxies over the same regions", () => {
  it("refuses a second proxy with the same node name, naming the node, each region, the holder and the fix", async () => {
    const first = await launch("twin");
    const port = await first.port();
    const second = await launch("twin");
    expect(await second.exitCode()).toBe(69);
    const lines = refusalLines(second.stderr);
    expect(lines.map((line) => /in region ([a-z-]+)/.exec(line)?.[1]).sort()).toEqual([...REGIONS].sort());
    for (const line of lines) {
      expect(line).toMatch(/^geoproxy: node "twin" is in use: another proxy holds its claim in region /);
      expect(line).toContain('application_name "geoproxy node twin"');
      expect(line).toContain("Give each proxy its own [server] node");
    }
    // The first one goes on serving, writes across regions included.
    const c = await client(port);
    try {
      expect(await rowsWithId(await writeAcross(c))).toBe(2);
    } finally {
      await c.end();
    }
  });

  it("refuses a second proxy when both leave the node name at its default", async () => {
    const first = await launch(undefined);
    await first.port();
    const second = await launch(undefined);
    expect(await second.exitCode()).toBe(69);
    expect(refusalLines(second.stderr)[0]).toMatch(/node "geoproxy" is in use/);
  });

  it("refuses names that differ only where the transaction id prefix cannot tell them apart", async () => {
    const first = await launch("eu-1");
    await first.port();
    // geo_eu_1 both: the same prepared transactions.
    const underscore = await launch("eu_1");
    expect(await underscore.exitCode()).toBe(69);
    expect(refusalLines(underscore.stderr)[0]).toMatch(/node "eu_1" is in use/);
    // geo_eu_1_mv is the first one's move prefix.
    const moves = await launch("eu-1_mv");
    expect(await moves.exitCode()).toBe(69);
  });

  it("starts two proxies with different names, and both commit writes across regions", async () => {
    const left = await launch("left");
    const right = await launch("right");
    const [leftPort, rightPort] = await Promise.all([left.port(), right.port()]);
    const a = await client(leftPort);
    const b = await client(rightPort);
    try {
      const [fromLeft, fromRight] = await Promise.all([writeAcross(a), writeAcross(b)]);
      expect(await rowsWithId(fromLeft)).toBe(2);
      expect(await rowsWithId(fromRight)).toBe(2);
    } finally {
      await a.end();
      await b.end();
    }
    expect(await preparedIn("eu-west")).toEqual([]);
  });

  it("starts a proxy with the name of one killed with SIGKILL: the claim died with its sessions", async () => {
    const first = await launch("phoenix");
    await first.port();
    expect(await claimSessions("eu-west", "phoenix")).toHaveLength(1);
    await first.kill();
    const next = await launch("phoenix");
    const port = await next.port();
    const c = await client(port);
    try {
      expect(await rowsWithId(await writeAcross(c))).toBe(2);
    } finally {
      await c.end();
    }
  });

  it("recovers only its own prepared transactions, leaving another live proxy's where they are", async () => {
    const keeper = await launch("keeper");
    await keeper.port();
    // Prepared by hand: one for each node, neither decided, both old enough to roll back.
    const theirs = new GidFactory(prefixFor("keeper")).next(Date.now() - 3_600_000);
    const ours = new GidFactory(prefixFor("sweeper")).next(Date.now() - 3_600_000);
    for (const [gid, id] of [
      [theirs, nextId++],
      [ours, nextId++],
    ] as const) {
      await direct["eu-west"].query("BEGIN");
      await direct["eu-west"].query(`INSERT INTO users (tenant_id, id, name) VALUES ('alice', ${id}, 'x')`);
      await direct["eu-west"].query(`PREPARE TRANSACTION '${gid}'`);
    }
    // The table log opens at start, so recovery runs at once and then every 200 ms.
    const sweeper = await launch(
      "sweeper",
      'decision_log = "table"\nrecovery_interval_ms = 200\nrecovery_grace_ms = 300\ndecide_deadline_ms = 200',
    );
    await sweeper.port();
    await eventually(async () => !(await preparedIn("eu-west")).includes(ours));
    expect(await preparedIn("eu-west")).toEqual([theirs]);
    await direct["eu-west"].query(`ROLLBACK PREPARED '${theirs}'`);
  });

  it("stops deciding in a region whose claim another session took while it ran, and decides again once it is back", async () => {
    const proxy = await launch("steady", "recovery_interval_ms = 200");
    const c = await client(await proxy.port());
    const holder = new pg.Client({
      host: cluster.servers[0]!.host,
      port: cluster.servers[0]!.port,
      user: "postgres",
      database: "postgres",
    });
    await holder.connect();
    try {
      expect(await rowsWithId(await writeAcross(c))).toBe(2);
      const [pid] = await claimSessions("eu-west", "steady");
      // Ended and taken in one statement: the waiting lock is granted before the proxy can retake it.
      await holder.query(
        `SELECT pg_terminate_backend(${pid}), pg_advisory_lock(${claimKey(prefixFor("steady"))})`,
      );
      // Once the proxy has seen it: the alert is raised from the claim's state.
      await eventually(async () =>
        (await c.query("SHOW ALERTS")).rows.some(
          (row) => row.name === "node_claim_missing" && row.subject === "eu-west",
        ),
      );
      const refused = await writeAcross(c).then(
        () => null,
        (error: unknown) => error as { code?: string; message?: string },
      );
      expect(refused?.code).toBe("55000");
      expect(refused?.message).toMatch(/does not hold the claim on node "steady" in region eu-west/);
      const alerts = await c.query("SHOW ALERTS");
      expect(
        alerts.rows.filter((row) => row.name === "node_claim_missing").map((row) => row.subject),
      ).toEqual(["eu-west"]);
      await holder.query(`SELECT pg_advisory_unlock(${claimKey(prefixFor("steady"))})`);
      await eventually(async () => (await claimSessions("eu-west", "steady")).length === 1);
      await eventually(async () =>
        writeAcross(c).then(
          (id) => rowsWithId(id).then((n) => n === 2),
          () => false,
        ),
      );
    } finally {
      await holder.end();
      await c.end();
    }
  });
});
