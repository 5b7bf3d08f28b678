import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { createLogger } from "../src/log.js";
import { REGIONS, type RegionName, regionsToml } from "./support/fake-regions.js";
import { directoryEntries } from "./support/real-regions.js";
import { proxyClient, timed } from "./support/timed-query.js";

/**
 * A region's own `connect_timeout_ms` and `tcp_keepalive_ms` in `[[topology.regions]]` are the
 * ones its backend connections use, over `[pool]`'s; a region that sets none keeps `[pool]`'s.
 * Three real PostgreSQL servers hold the example schema; eu-west (alice) is home, us-east has bob
 * and ap-south chandra.
 */

const schemaFile = fileURLToPath(new URL("../../../examples/schema.sql", import.meta.url));
const run = promisify(execFile);

/** [pool]'s connect timeout: a region that used it would keep a statement (and the start) a minute. */
const POOL_CONNECT_MS = 60_000;
const REGION_CONNECT_MS = 400;
/** Generous for a loaded 2-core machine, and far below POOL_CONNECT_MS. */
const FAST_MS = 5_000;

let cluster: PgCluster;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: readFileSync(schemaFile, "utf8") });
});

afterAll(async () => {
  await cluster?.stop();
});

/**
 * The three regions at `ports`, each region's `fields` written in its own `[[topology.regions]]`,
 * `extra` appended (a `[pool]` section).
 */
function configWith(
  node: string,
  ports: readonly number[],
  fields: Partial<Record<RegionName, string>>,
  extra: string,
) {
  let toml = regionsToml(ports, extra).replace("[server]\n", `[server]\nnode = "${node}"\n`);
  for (const region of REGIONS) {
    const own = fields[region];
    if (own !== undefined) toml = toml.replace(`id = "${region}"\n`, `id = "${region}"\n${own}\n`);
  }
  return parseConfig(toml, `${node}.toml`);
}

const client = (proxy: RunningProxy): Promise<pg.Client> => proxyClient(proxy.port);

describe("a region whose own connect_timeout_ms is short, at an address that never answers", () => {
  /** Accepts connections and never says a word: neither to the SSLRequest nor to a StartupMessage. */
  let silent: Server;
  const held = new Set<Socket>();
  const logLines: Record<string, unknown>[] = [];
  let proxy: RunningProxy | undefined;
  let startMs = 0;

  beforeAll(async () => {
    silent = createServer((socket) => {
      held.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const config = configWith(
      "region-connect-timeout",
      [cluster.servers[0]!.port, silentPort, cluster.servers[2]!.port],
      { "us-east": `connect_timeout_ms = ${REGION_CONNECT_MS}` },
      `\n[pool]\nconnect_timeout_ms = ${POOL_CONNECT_MS}\n`,
    );
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n"))
          if (line.trim() !== "") logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const started = Date.now();
    proxy = await startProxy({
      config,
      directory: new MemoryDirectory(directoryEntries()),
      logger: createLogger("info", sink),
      port: 0,
      shutdownTimeoutMs: 500,
    });
    startMs = Date.now() - started;
  }, 30_000);

  afterAll(async () => {
    await proxy?.close({ timeoutMs: 200 });
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it("starts within the region's own timeout though [pool]'s is a minute, and reports the region down", () => {
    console.log(`started in ${startMs} ms with us-east silent (connect_timeout_ms ${REGION_CONNECT_MS})`);
    expect(startMs).toBeLessThan(FAST_MS);
    expect(proxy!.lateRegions).toEqual(["us-east"]);
    const line = logLines.find((entry) => entry["region"] === "us-east" && entry["level"] === 40);
    expect(String(line?.["err"])).toContain(`timed out after ${REGION_CONNECT_MS} ms`);
  });

  it("fails a statement for the region within its own timeout, naming it, while the other regions serve", async () => {
    const c = await client(proxy!);
    const alice = await timed(c, "SELECT count(*) FROM users WHERE tenant_id = 'alice'");
    expect(alice.error).toBeUndefined();
    expect(alice.rows).toEqual([["0"]]);
    const bob = await timed(c, "SELECT count(*) FROM users WHERE tenant_id = 'bob'");
    console.log(`a statement for silent us-east failed after ${bob.ms} ms: ${bob.error?.message}`);
    expect(bob.error?.code).toBe("08001");
    expect(bob.error?.message).toContain("us-east");
    expect(bob.error?.message).toContain(`timed out after ${REGION_CONNECT_MS} ms`);
    expect(bob.ms).toBeLessThan(FAST_MS);
    // The session carries on, and ap-south, which sets nothing, is served on [pool]'s timeout.
    const chandra = await timed(c, "SELECT count(*) FROM users WHERE tenant_id = 'chandra'");
    expect(chandra.error).toBeUndefined();
    expect(chandra.rows).toEqual([["0"]]);
    await c.end();
  });
});

/** Seconds left on a socket's keepalive timer as `ss -o` shows it (`timer:(keepalive,19sec,0)`), or null. */
function keepaliveLeft(line: string): number | null {
  const timer = /timer:\(keepalive,(?:(\d+)min)?(?:(\d+(?:\.\d+)?)sec)?(?:(\d+)ms)?,/.exec(line);
  if (timer === null) return null;
  return Number(timer[1] ?? 0) * 60 + Number(timer[2] ?? 0) + Number(timer[3] ?? 0) / 1000;
}

describe("a region's own tcp_keepalive_ms", () => {
  /** [pool]'s: us-east sets nothing and keeps it. */
  const POOL_KEEPALIVE_MS = 45_000;
  /** ap-south's own, below [pool]'s; eu-west sets 0 (off). */
  const AP_SOUTH_KEEPALIVE_MS = 20_000;
  let proxy: RunningProxy | undefined;
  const direct: pg.Client[] = [];

  beforeAll(async () => {
    const config = configWith(
      "region-keepalive",
      cluster.servers.map((server) => server.port),
      { "eu-west": "tcp_keepalive_ms = 0", "ap-south": `tcp_keepalive_ms = ${AP_SOUTH_KEEPALIVE_MS}` },
      `\n[pool]\ntcp_keepalive_ms = ${POOL_KEEPALIVE_MS}\n`,
    );
    proxy = await startProxy({
      config,
      directory: new MemoryDirectory(directoryEntries()),
      logLevel: "silent",
      port: 0,
      shutdownTimeoutMs: 500,
    });
    for (const server of cluster.servers) {
      const c = new pg.Client({
        host: server.host,
        port: server.port,
        user: "postgres",
        database: "postgres",
      });
      await c.connect();
      direct.push(c);
    }
  }, 60_000);

  afterAll(async () => {
    await proxy?.close({ timeoutMs: 200 });
    await Promise.all(direct.map((c) => c.end().catch(() => undefined)));
  });

  /**
   * The `ss` line of each socket the proxy holds to the region's server: the server names the
   * client ports of its sessions but the test's own, so no other socket to the same port counts.
   */
  async function proxySockets(index: number): Promise<string[]> {
    const server = cluster.servers[index]!;
    const result = await direct[index]!.query<{ client_port: number }>(
      "SELECT client_port FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND client_port IS NOT NULL",
    );
    const lines: string[] = [];
    for (const { client_port: port } of result.rows) {
      const { stdout } = await run("ss", [
        "-tnoH",
        "state",
        "established",
        `( sport = :${port} and dport = :${server.port} )`,
      ]);
      lines.push(...stdout.split("\n").filter((line) => line.trim() !== ""));
    }
    return lines;
  }

  it("is on the sockets of the regions that have one, at their own idle time, and off where the region sets 0", async () => {
    const c = await client(proxy!);
    for (const key of ["alice", "bob", "chandra"]) {
      const outcome = await timed(c, `SELECT count(*) FROM users WHERE tenant_id = '${key}'`);
      expect(outcome.error, key).toBeUndefined();
    }
    await c.end();
    const [euWest, usEast, apSouth] = await Promise.all([proxySockets(0), proxySockets(1), proxySockets(2)]);
    console.log(["eu-west", ...euWest, "us-east", ...usEast, "ap-south", ...apSouth].join("\n"));
    for (const lines of [euWest, usEast, apSouth]) expect(lines.length).toBeGreaterThan(0);
    // eu-west sets 0 over [pool]'s 45 s: no keepalive timer at all.
    expect(euWest.map(keepaliveLeft)).toEqual(euWest.map(() => null));
    // us-east keeps [pool]'s 45 s; ap-south counts down from its own 20 s.
    for (const left of usEast.map(keepaliveLeft)) {
      expect(left).not.toBeNull();
      expect(left!).toBeGreaterThan(AP_SOUTH_KEEPALIVE_MS / 1000);
      expect(left!).toBeLessThanOrEqual(POOL_KEEPALIVE_MS / 1000);
    }
    for (const left of apSouth.map(keepaliveLeft)) {
      expect(left).not.toBeNull();
      expect(left!).toBeLessThanOrEqual(AP_SOUTH_KEEPALIVE_MS / 1000);
    }
  });
});
