import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, type PgReplica, startCluster, startReplica } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { parseScrape, type Scrape } from "./admin-prometheus.js";

/**
 * The backend metrics of docs/metrics.md read from /metrics: two real regions, eu-west with a
 * streaming replica, us-east's endpoint naming no role (each client's role gets pools of its own).
 */

const POOL_MAX = 7;

let cluster: PgCluster;
let replica: PgReplica;
let proxy: RunningProxy;
let primaryDirect: pg.Client;
let replicaDirect: pg.Client;
let usDirect: pg.Client;

function toml(primary: number, replicaPort: number, other: number): string {
  return `[server]
host = "127.0.0.1"
port = 0
node = "metrics-replica"

[pool]
max = ${POOL_MAX}

[routing]
health_interval_ms = 100
health_probe_timeout_ms = 2000

[admin]
port = 0

[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = ${primary}, database = "postgres", user = "postgres" }
replicas = [{ host = "127.0.0.1", port = ${replicaPort}, database = "postgres", user = "postgres" }]

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = ${other}, database = "postgres" }

[[tables]]
table = "items"
placement = "geo_partitioned"
key = "tenant_id"

[txn]
data_dir = "${join(tmpdir(), `geo-txn-metrics-replica-${process.pid}-${primary}`)}"
`;
}

async function scrape(): Promise<Scrape> {
  const admin = proxy.runtime.observability.admin;
  if (admin === undefined) throw new Error("the [admin] section did not start the admin port");
  const response = await fetch(`${admin.url}/metrics`);
  expect(response.status).toBe(200);
  return parseScrape(await response.text());
}

async function connect(user = "postgres"): Promise<pg.Client> {
  const c = new pg.Client({ host: proxy.host, port: proxy.port, user, database: "postgres" });
  await c.connect();
  return c;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function replicaCaughtUp(): Promise<void> {
  await until(async () => {
    const [p, r] = await Promise.all([
      primaryDirect.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn"),
      replicaDirect.query<{ lsn: string }>("SELECT pg_last_wal_replay_lsn()::text AS lsn"),
    ]);
    return p.rows[0]!.lsn === r.rows[0]!.lsn;
  }, "the replica replayed everything");
}

function replicaEndpoint(): string {
  return `127.0.0.1:${replica.port}`;
}

beforeAll(async () => {
  cluster = await startCluster({
    count: 2,
    initSql:
      "CREATE TABLE items (tenant_id text NOT NULL, id int NOT NULL, v text, PRIMARY KEY (tenant_id, id)); CREATE ROLE metrics_role LOGIN SUPERUSER;",
  });
  replica = await startReplica(cluster, { of: 0 });
  const [eu, us] = cluster.servers;
  primaryDirect = new pg.Client({ host: eu!.host, port: eu!.port, user: "postgres", database: "postgres" });
  replicaDirect = new pg.Client({ host: replica.host, port: replica.port, user: "postgres" });
  usDirect = new pg.Client({ host: us!.host, port: us!.port, user: "postgres", database: "postgres" });
  await Promise.all([primaryDirect.connect(), replicaDirect.connect(), usDirect.connect()]);
  for (const c of [primaryDirect, replicaDirect, usDirect]) c.on("error", () => undefined);
  await primaryDirect.query("INSERT INTO items VALUES ('alice', 1, 'a1'), ('alice', 2, 'a2')");
  await primaryDirect.query(
    "INSERT INTO items SELECT 'alice', 100 + g, repeat('x', 200) FROM generate_series(1, 2000) AS g",
  );
  await usDirect.query("INSERT INTO items VALUES ('bob', 1, 'b1')");
  proxy = await startProxy({
    config: parseConfig(toml(eu!.port, replica.port, us!.port), "metrics-replica.toml"),
    directory: new MemoryDirectory([
      ["alice", "eu-west"],
      ["bob", "us-east"],
    ]),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
  await replicaCaughtUp();
}, 120_000);

afterAll(async () => {
  await proxy?.close({ timeoutMs: 200 });
  await Promise.all([primaryDirect, replicaDirect, usDirect].map((c) => c?.end().catch(() => undefined)));
  await replica?.stop();
  await cluster?.stop();
});

describe("backend metrics with a replica and an endpoint that takes the client's role", () => {
  it("shows geoproxy_backend_lag_bytes of the replica rise while its replay is paused under a write, and fall back to 0", async () => {
    await until(
      async () => (await scrape()).value("geoproxy_backend_lag_bytes", { endpoint: replicaEndpoint() }) === 0,
      "the replica's lag reads 0",
    );
    const primary = `127.0.0.1:${cluster.servers[0]!.port}`;
    expect((await scrape()).value("geoproxy_backend_lag_bytes", { endpoint: primary })).toBe(0);
    await replicaDirect.query("SELECT pg_wal_replay_pause()");
    const writer = await connect();
    try {
      const updated = await writer.query(
        "UPDATE items SET v = v || 'y' WHERE tenant_id = 'alice' AND id > 100",
      );
      expect(updated.rowCount).toBe(2000);
      await until(
        async () =>
          ((await scrape()).value("geoproxy_backend_lag_bytes", { endpoint: replicaEndpoint() }) ?? 0) >
          100_000,
        "the lag of 2,000 rows of 200 bytes shows",
      );
    } finally {
      await replicaDirect.query("SELECT pg_wal_replay_resume()");
      await writer.end();
    }
    await replicaCaughtUp();
    await until(
      async () => (await scrape()).value("geoproxy_backend_lag_bytes", { endpoint: replicaEndpoint() }) === 0,
      "the replica's lag reads 0 again",
    );
    const metrics = await scrape();
    expect(
      metrics.value("geoproxy_backend_lag_bytes", { endpoint: replicaEndpoint(), region: "eu-west" }),
    ).toBe(0);
    expect(metrics.value("geoproxy_backend_up", { endpoint: replicaEndpoint(), role: "replica" })).toBe(1);
  });

  it("lists the replica's pool in /metrics, /snapshot and the dashboard once a read ran there", async () => {
    const reader = await connect();
    try {
      const read = await reader.query<{ r: boolean }>(
        "SELECT pg_is_in_recovery() AS r, id FROM items WHERE tenant_id = 'alice' AND id < 3",
      );
      expect(read.rows.map((row) => row.r)).toEqual([true, true]);
    } finally {
      await reader.end();
    }
    const metrics = await scrape();
    const endpoint = replicaEndpoint();
    expect(metrics.value("geoproxy_pool_max_connections", { endpoint, region: "eu-west" })).toBe(POOL_MAX);
    const idle = metrics.value("geoproxy_pool_connections", { endpoint, state: "idle" }) ?? 0;
    const busy = metrics.value("geoproxy_pool_connections", { endpoint, state: "busy" }) ?? 0;
    expect(idle + busy).toBeGreaterThanOrEqual(1);
    expect(metrics.value("geoproxy_pool_waiting", { endpoint })).toBe(0);
    const admin = proxy.runtime.observability.admin!;
    const snapshot = (await (await fetch(`${admin.url}/snapshot`)).json()) as {
      pools: { endpoint: string; region: string; max: number }[];
    };
    expect(snapshot.pools.find((pool) => pool.endpoint === endpoint)).toMatchObject({
      region: "eu-west",
      max: POOL_MAX,
    });
    // The dashboard's pools panel, as a browser first receives it, has the replica's row too.
    const html = await (await fetch(`${admin.url}/`)).text();
    const pools = /<section id="pools">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
    expect(pools).toContain(`<td>eu-west</td><td>${endpoint}</td>`);
  });

  it("adds [pool] max to geoproxy_pool_max_connections when a new role's statement opens pools of its own", async () => {
    const us = `127.0.0.1:${cluster.servers[1]!.port}`;
    const postgres = await connect();
    await postgres.query("SELECT v FROM items WHERE tenant_id = 'bob'");
    const before = (await scrape()).value("geoproxy_pool_max_connections", {
      endpoint: us,
      region: "us-east",
    });
    expect(before).toBeGreaterThanOrEqual(POOL_MAX);
    const other = await connect("metrics_role");
    try {
      const read = await other.query<{ v: string; who: string }>(
        "SELECT v, current_user AS who FROM items WHERE tenant_id = 'bob'",
      );
      expect(read.rows).toEqual([{ v: "b1", who: "metrics_role" }]);
      const after = (await scrape()).value("geoproxy_pool_max_connections", {
        endpoint: us,
        region: "us-east",
      });
      expect(after).toBe(before! + POOL_MAX);
    } finally {
      await other.end();
      await postgres.end();
    }
  });
});
