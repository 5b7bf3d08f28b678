import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectSocket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "./support/move-regions.js";
import { ProxyChild } from "./support/proxy-child.js";

// `geoproxy serve --workers 2` as a real process tree over three real servers: each worker a
// proxy of its own in the shared directory, cancel requests reaching the worker that holds the
// session whichever worker the new connection lands on, a killed worker restarted.
let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
let folder: string;
const running: ProxyChild[] = [];
const clients: pg.Client[] = [];

const SHARED = 'shared = true\nauthority = "eu-west"\npoll_ms = 100\nlease_ms = 600\n';

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
  direct = await connectDirect(cluster);
  folder = await mkdtemp(join(tmpdir(), "geo-workers-"));
});

beforeEach(async () => {
  for (const region of REGIONS) {
    await direct[region].query(
      "DROP TABLE IF EXISTS geoproxy_directory, geoproxy_directory_peers, geoproxy_directory_moves, geoproxy_directory_confirms, geoproxy_directory_moving; TRUNCATE orders, users",
    );
  }
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
  await Promise.all(running.splice(0).map((child) => child.stop()));
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  await cluster?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

/** A proxy named `node` over the three servers; `store` is its [directory_store] ("" for none). */
async function launch(
  node: string,
  args: readonly string[],
  store = SHARED,
  server = "",
  extra = "",
): Promise<ProxyChild> {
  const data = await mkdtemp(join(folder, `${node}-`));
  const section = `${store === "" ? "" : `\n[directory_store]\n${store}\n`}${extra}`;
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    `\n[txn]\ndata_dir = "${data}"\n${section}`,
  ).replace("[server]\n", `[server]\nnode = "${node}"\n${server}`);
  const configPath = join(data, "geoproxy.toml");
  await writeFile(configPath, toml);
  const child = new ProxyChild(["--config", configPath, "--log-level", "info", ...args]);
  running.push(child);
  return child;
}

async function connect(port: number): Promise<pg.Client> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  // A worker stopping ends its idle sessions with 57P01.
  client.on("error", () => undefined);
  await client.connect();
  clients.push(client);
  return client;
}

interface Peer {
  readonly node: string;
  readonly thisProxy: boolean;
  readonly lease: string;
  readonly sessions: number;
  readonly pid: number;
}

async function peers(client: pg.Client): Promise<Peer[]> {
  const { rows } = await client.query("SHOW PEERS");
  return rows.map((row: Record<string, string>) => ({
    node: row["node"]!,
    thisProxy: row["this_proxy"] === "t",
    lease: row["lease"]!,
    sessions: Number(row["sessions"]),
    pid: Number(row["pid"]),
  }));
}

/** The worker (its node name) serving `client`'s session. */
async function workerOf(client: pg.Client): Promise<string> {
  const self = (await peers(client)).find((peer) => peer.thisProxy);
  if (self === undefined) throw new Error("SHOW PEERS has no row for this proxy");
  return self.node;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Both workers in SHOW PEERS with a held lease, through a new connection. */
async function bothHeld(port: number, node: string): Promise<Peer[]> {
  let rows: Peer[] = [];
  await until(async () => {
    const client = await connect(port);
    rows = await peers(client);
    await client.end();
    return [`${node}-w1`, `${node}-w2`].every((name) =>
      rows.some((p) => p.node === name && p.lease === "held"),
    );
  }, 10_000);
  return rows;
}

/** A CancelRequest on a new connection, as libpq sends it: length 16, code 80877102, pid, secret. */
function sendCancel(port: number, processId: number, secretKey: number): Promise<void> {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(processId, 8);
  packet.writeInt32BE(secretKey, 12);
  return new Promise((resolve, reject) => {
    const socket = connectSocket(port, "127.0.0.1", () => socket.end(packet));
    socket.on("error", reject);
    socket.on("close", () => resolve());
    socket.resume();
  });
}

interface CancelLine {
  readonly node: string;
  readonly outcome: string;
  /** True on the worker a cancel was passed on to. */
  readonly forwarded?: boolean;
}

/** Every `cancel request` a worker logged, in order. */
function cancelLines(stdout: string): CancelLine[] {
  return stdout
    .split("\n")
    .filter((line) => line.includes('"msg":"cancel request"'))
    .map((line) => JSON.parse(line) as CancelLine);
}

function count(text: string, pattern: RegExp): number {
  return text.split("\n").filter((line) => pattern.test(line)).length;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("geoproxy serve --workers 2", () => {
  it("runs two workers on one port, each its own peer, and spreads clients over both", async () => {
    const proxy = await launch("wk", ["--workers", "2"]);
    const port = await proxy.listening();
    expect(count(proxy.stdout, /"msg":"geoproxy listening"/)).toBe(1);
    // Each process writes its own lines: a worker's may reach the pipe after the primary's.
    await until(async () => count(proxy.stdout, /"msg":"worker listening"/) === 2, 2000);
    const rows = await bothHeld(port, "wk");
    expect(rows.map((peer) => peer.node).sort()).toEqual(["wk-w1", "wk-w2"]);
    expect(new Set(rows.map((peer) => peer.pid)).size).toBe(2);
    expect(rows.map((peer) => peer.pid)).not.toContain(proxy.pid);

    const sessions = await Promise.all(Array.from({ length: 20 }, () => connect(port)));
    const byWorker = new Map<string, number>();
    for (const client of sessions) {
      const node = await workerOf(client);
      byWorker.set(node, (byWorker.get(node) ?? 0) + 1);
    }
    expect([...byWorker.keys()].sort()).toEqual(["wk-w1", "wk-w2"]);
    for (const n of byWorker.values()) expect(n).toBeGreaterThanOrEqual(5);

    // Writes through every session, each read back through another (maybe on the other worker).
    await Promise.all(
      sessions.map((client, i) =>
        client.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, $2, $3)", [`t${i}`, i, `n${i}`]),
      ),
    );
    for (const [i, client] of sessions.entries()) {
      const other = sessions[(i + 1) % sessions.length]!;
      const { rows: found } = await other.query("SELECT name FROM users WHERE tenant_id = $1 AND id = $2", [
        `t${i}`,
        i,
      ]);
      expect(found).toEqual([{ name: `n${i}` }]);
      expect((await client.query("SELECT count(*)::int AS n FROM users")).rows).toEqual([{ n: 20 }]);
    }
    let stored = 0;
    for (const region of REGIONS)
      stored += (await direct[region].query("SELECT count(*)::int AS n FROM users")).rows[0].n;
    expect(stored).toBe(20);
  });

  it("cancels a statement from any worker: the cancel connection's worker or the session's", async () => {
    const proxy = await launch("wc", ["--workers", "2"]);
    const port = await proxy.listening();
    await bothHeld(port, "wc");
    let same = 0;
    let crossed = 0;
    // Cancel connections land on either worker: go on until both kinds happened (bounded).
    for (let attempt = 0; attempt < 12 && (same === 0 || crossed === 0 || attempt < 4); attempt++) {
      const client = await connect(port);
      const holder = await workerOf(client);
      const sleeping = client.query("SELECT pg_sleep(30)").then(
        () => null,
        (error: { code?: string }) => error.code ?? "no code",
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The cluster hands connections out in turn: one more in between on odd attempts makes the
      // cancel connection land on the other worker than it would.
      if (attempt % 2 === 1) await (await connect(port)).end();
      const seen = cancelLines(proxy.stdout).length;
      const started = Date.now();
      const key = client as unknown as { processID: number; secretKey: number };
      await sendCancel(port, key.processID, key.secretKey);
      expect(await sleeping).toBe("57014");
      expect(Date.now() - started).toBeLessThan(5000);
      await until(
        async () => cancelLines(proxy.stdout).some((line, i) => i >= seen && line.outcome === "cancelled"),
        2000,
      );
      const lines = cancelLines(proxy.stdout).slice(seen);
      const landed = lines.find((line) => line.forwarded !== true)!;
      if (landed.outcome === "forwarded") {
        crossed++;
        expect(landed.node).not.toBe(holder);
        expect(lines.find((line) => line.forwarded === true)).toMatchObject({
          node: holder,
          outcome: "cancelled",
        });
      } else {
        same++;
        expect(landed).toMatchObject({ node: holder, outcome: "cancelled" });
      }
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    }
    expect(same).toBeGreaterThan(0);
    expect(crossed).toBeGreaterThan(0);
    // A forged key, naming a worker that does not exist or a session nobody has, cancels nothing
    // and breaks nothing.
    await sendCancel(port, 12345, -1);
    await sendCancel(port, 1, 0x7fffffff);
    const client = await connect(port);
    expect((await client.query("SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
  });

  it("restarts a worker killed with SIGKILL, which clients reach again and SHOW PEERS lists", async () => {
    const proxy = await launch("wr", ["--workers", "2"]);
    const port = await proxy.listening();
    const rows = await bothHeld(port, "wr");
    const victim = rows.find((peer) => peer.node === "wr-w2")!;
    process.kill(victim.pid, "SIGKILL");
    await until(
      async () => /"signal":"SIGKILL"[^\n]*"msg":"worker exited: restarting it"/.test(proxy.stdout),
      5000,
    );
    await until(async () => /"msg":"worker restarted"/.test(proxy.stdout), 15_000);
    await until(async () => {
      const after = await bothHeld(port, "wr");
      return after.some((peer) => peer.node === "wr-w2" && peer.pid !== victim.pid);
    }, 10_000);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const client = await connect(port);
      seen.add(await workerOf(client));
      await client.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'x')", [`after-${i}`]);
      expect((await client.query("SELECT count(*)::int AS n FROM users")).rows).toEqual([{ n: i + 1 }]);
    }
    expect([...seen].sort()).toEqual(["wr-w1", "wr-w2"]);
  });

  it("stops every worker on SIGTERM to the primary, which exits 0", async () => {
    const proxy = await launch("ws", ["--workers", "2"]);
    const port = await proxy.listening();
    const pids = (await bothHeld(port, "ws")).map((peer) => peer.pid);
    const client = await connect(port);
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    proxy.child.kill("SIGTERM");
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(alive(pid), `worker ${pid}`).toBe(false);
    expect(count(proxy.stdout, /"msg":"worker stopped"/)).toBe(2);
  });

  it("runs workers over a fixed directory, without [directory_store]", async () => {
    const proxy = await launch("wf", [], "", "workers = 2\n");
    const port = await proxy.listening();
    expect(proxy.stdout).toMatch(/"nodes":\["wf-w1","wf-w2"\][^\n]*"msg":"geoproxy listening"/);
    const client = await connect(port);
    await client.query("INSERT INTO users (tenant_id, id, name) VALUES ('fixed', 1, 'f')");
    expect((await client.query("SELECT name FROM users WHERE tenant_id = 'fixed'")).rows).toEqual([
      { name: "f" },
    ]);
  });
});

/** Each worker's admin port, from its `admin port listening` line. */
function adminPorts(stdout: string): Map<string, number> {
  const ports = new Map<string, number>();
  for (const line of stdout.split("\n").filter((l) => l.includes('"msg":"admin port listening"'))) {
    const fields = JSON.parse(line) as { node: string; port: number };
    ports.set(fields.node, fields.port);
  }
  return ports;
}

async function snapshotNode(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/snapshot`);
  return ((await response.json()) as { node: string }).node;
}

describe("the admin port of each worker", () => {
  it("gives each worker a free port of its own with port = 0, each serving its own node", async () => {
    const proxy = await launch("wa", ["--workers", "2"], "", "", "\n[admin]\nport = 0\n");
    await proxy.listening();
    await until(async () => adminPorts(proxy.stdout).size === 2, 2000);
    const ports = adminPorts(proxy.stdout);
    expect([...ports.keys()].sort()).toEqual(["wa-w1", "wa-w2"]);
    expect(ports.get("wa-w1")).not.toBe(ports.get("wa-w2"));
    for (const [node, port] of ports) expect(await snapshotNode(port)).toBe(node);
  });

  it("gives worker i [admin] port + i - 1", async () => {
    const base = 20_000 + (process.pid % 20_000);
    const proxy = await launch("wb", ["--workers", "2"], "", "", `\n[admin]\nport = ${base}\n`);
    await proxy.listening();
    expect(await snapshotNode(base)).toBe("wb-w1");
    expect(await snapshotNode(base + 1)).toBe("wb-w2");
  });
});

describe("workers refused at start", () => {
  it("exits 78 for workers = 2 over a directory store that is not shared, naming the field", async () => {
    const proxy = await launch("wn", [], "shared = false\n", "workers = 2\n");
    expect(await proxy.exitCode()).toBe(78);
    expect(proxy.stderr).toMatch(
      /geoproxy\.toml:\d+: directory_store\.shared: workers = 2 runs several worker processes.*set shared = true/,
    );
  });

  it("exits 78 for --workers 2 over a directory store that is not shared", async () => {
    const proxy = await launch("wm", ["--workers", "2"], "shared = false\n");
    expect(await proxy.exitCode()).toBe(78);
    expect(proxy.stderr).toMatch(
      /geoproxy\.toml: directory_store\.shared: --workers 2 runs several worker processes/,
    );
  });

  it("exits with a worker's own status when it cannot start, rather than restarting it", async () => {
    // Another process already holds node wx-w1's claim in every region.
    const holder = await launch("wx-w1", []);
    await holder.listening();
    const proxy = await launch("wx", ["--workers", "2"]);
    expect(await proxy.exitCode()).toBe(69);
    expect(proxy.stdout).toMatch(/"worker":1[^\n]*"msg":"worker failed at start: stopping every worker"/);
    expect(proxy.stdout).not.toMatch(/restarting it/);
  });
});
