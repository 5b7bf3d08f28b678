import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, type PgReplica, startCluster, startReplica } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";

/**
 * Two real regions (eu-west at home, us-east), eu-west with a streaming replica, behind a proxy
 * probing every backend every 100 ms. Which server answered is read from `pg_is_in_recovery()`
 * in the same row as the data: true only on the replica.
 */

const MAX_LAG = 65_536;

let cluster: PgCluster;
let replica: PgReplica;
let proxy: RunningProxy;
let primaryDirect: pg.Client;
let replicaDirect: pg.Client;

function regionsToml(primary: number, replicaPort: number, other: number, extra = ""): string {
  return `[server]
host = "127.0.0.1"
port = 0

[routing]
max_replica_lag_bytes = ${MAX_LAG}
health_interval_ms = 100
health_probe_timeout_ms = 2000
health_failures_to_down = 2

[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = ${primary}, database = "postgres", user = "postgres" }
replicas = [{ host = "127.0.0.1", port = ${replicaPort}, database = "postgres", user = "postgres" }]

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = ${other}, database = "postgres", user = "postgres" }

[[tables]]
table = "items"
placement = "geo_partitioned"
key = "tenant_id"

[txn]
data_dir = "${join(tmpdir(), `geo-txn-replicas-${process.pid}-${primary}`)}"
${extra}`;
}

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ host: proxy.host, port: proxy.port, user: "postgres", database: "postgres" });
  await c.connect();
  return c;
}

async function withClient<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = await client();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

/** Whether a fresh session's read of alice's rows ran on the replica, and what it saw. */
async function aliceRead(c: pg.Client, extra = ""): Promise<{ onReplica: boolean; ids: number[] }> {
  const result = await c.query<{ r: boolean; id: number }>(
    `SELECT pg_is_in_recovery() AS r, id FROM items WHERE tenant_id = 'alice' ${extra} ORDER BY id`,
  );
  const onReplica = result.rows.length === 0 ? await recoveryOfEmpty(c, extra) : result.rows[0]!.r;
  return { onReplica, ids: result.rows.map((row) => row.id) };
}

/** For a read that found no row: the same statement's server, asked with an outer join. */
async function recoveryOfEmpty(c: pg.Client, extra: string): Promise<boolean> {
  const result = await c.query<{ r: boolean }>(
    `SELECT pg_is_in_recovery() AS r, count(*) FROM items WHERE tenant_id = 'alice' ${extra}`,
  );
  return result.rows[0]!.r;
}

async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function health() {
  const replicas = proxy.runtime.replicas;
  if (replicas === undefined) throw new Error("the proxy runs no replica service");
  return replicas.health;
}

function replicaAddress(): string {
  return `127.0.0.1:${replica.port}`;
}

async function replicaCaughtUp(): Promise<void> {
  await until(async () => {
    const [p, r] = await Promise.all([
      primaryDirect.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn"),
      replicaDirect.query<{ lsn: string }>("SELECT pg_last_wal_replay_lsn()::text AS lsn"),
    ]);
    return p.rows[0]!.lsn === r.rows[0]!.lsn;
  }, "the replica replayed everything");
  const round = health().probeNow();
  await round;
  await health().probeNow();
}

beforeAll(async () => {
  cluster = await startCluster({
    count: 2,
    // The testkit turns synchronous_commit off; read-your-writes needs COMMIT to return only once
    // its record was written, so the primary's position covers it (docs/replicas.md).
    settings: { synchronous_commit: "on" },
    initSql:
      "CREATE TABLE items (tenant_id text NOT NULL, id int NOT NULL, v text, PRIMARY KEY (tenant_id, id));",
  });
  replica = await startReplica(cluster, { of: 0 });
  const [eu, us] = cluster.servers;
  primaryDirect = new pg.Client({ host: eu!.host, port: eu!.port, user: "postgres", database: "postgres" });
  replicaDirect = new pg.Client({
    host: replica.host,
    port: replica.port,
    user: "postgres",
    database: "postgres",
  });
  await Promise.all([primaryDirect.connect(), replicaDirect.connect()]);
  primaryDirect.on("error", () => {});
  replicaDirect.on("error", () => {});
  await primaryDirect.query("INSERT INTO items VALUES ('alice', 1, 'a1'), ('alice', 2, 'a2')");
  const config = parseConfig(regionsToml(eu!.port, replica.port, us!.port), "replicas.toml");
  proxy = await startProxy({
    config,
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
  await Promise.all([primaryDirect?.end().catch(() => {}), replicaDirect?.end().catch(() => {})]);
  await replica?.stop();
  await cluster?.stop();
}, 60_000);

describe("reads and replicas", () => {
  it("sends a read outside a transaction to the region's replica, which has its rows", async () => {
    await withClient(async (c) => {
      expect(await aliceRead(c)).toEqual({ onReplica: true, ids: [1, 2] });
      const extended = await c.query<{ r: boolean; v: string }>(
        "SELECT pg_is_in_recovery() AS r, v FROM items WHERE tenant_id = $1 AND id = $2",
        ["alice", 2],
      );
      expect(extended.rows).toEqual([{ r: true, v: "a2" }]);
      const noTable = await c.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r");
      expect(noTable.rows[0]!.r).toBe(true);
    });
  });

  it("keeps on the primary what a replica must not run: FOR UPDATE, a writing CTE, the primary hint, a read-write block", async () => {
    await withClient(async (c) => {
      const locked = await c.query<{ r: boolean }>(
        "SELECT pg_is_in_recovery() AS r FROM items WHERE tenant_id = 'alice' AND id = 1 FOR UPDATE",
      );
      expect(locked.rows[0]!.r).toBe(false);
    });
    await withClient(async (c) => {
      const cte = await c.query<{ r: boolean; id: number }>(
        "WITH w AS (UPDATE items SET v = v WHERE tenant_id = 'alice' AND id = 1 RETURNING id) SELECT pg_is_in_recovery() AS r, id FROM w",
      );
      expect(cte.rows).toEqual([{ r: false, id: 1 }]);
    });
    await withClient(async (c) => {
      const hinted = await c.query<{ r: boolean }>(
        "/* geo: primary */ SELECT pg_is_in_recovery() AS r FROM items WHERE tenant_id = 'alice' AND id = 1",
      );
      expect(hinted.rows[0]!.r).toBe(false);
      await c.query("BEGIN");
      expect((await aliceRead(c)).onReplica).toBe(false);
      await c.query("COMMIT");
    });
  });

  it("lets a READ ONLY block read the replica", async () => {
    await replicaCaughtUp();
    await withClient(async (c) => {
      await c.query("BEGIN READ ONLY");
      expect(await aliceRead(c)).toEqual({ onReplica: true, ids: [1, 2] });
      await c.query("COMMIT");
    });
  });

  it("avoids a replica further behind than max_replica_lag_bytes, and uses it again once it caught up", async () => {
    await replicaDirect.query("SELECT pg_wal_replay_pause()");
    try {
      await primaryDirect.query(
        "INSERT INTO items SELECT 'alice', 100 + g, repeat('x', 200) FROM generate_series(1, 2000) AS g",
      );
      await until(
        () => (health().status(replicaAddress())?.lagBytes ?? 0n) > BigInt(MAX_LAG),
        "the lag shows",
      );
      await withClient(async (c) => {
        const read = await aliceRead(c, "AND id > 100");
        expect(read.onReplica).toBe(false);
        expect(read.ids).toHaveLength(2000);
      });
    } finally {
      await replicaDirect.query("SELECT pg_wal_replay_resume()");
    }
    await replicaCaughtUp();
    await withClient(async (c) => {
      const read = await aliceRead(c, "AND id > 100");
      expect(read).toMatchObject({ onReplica: true });
      expect(read.ids).toHaveLength(2000);
    });
    await primaryDirect.query("DELETE FROM items WHERE tenant_id = 'alice' AND id > 100");
    await replicaCaughtUp();
  });

  it("reads a session's own write at once, on the primary, while other sessions may read the replica", async () => {
    await replicaDirect.query("SELECT pg_wal_replay_pause()");
    const writer = await client();
    try {
      await writer.query("INSERT INTO items (tenant_id, id, v) VALUES ('alice', 10, 'mine')");
      expect(await aliceRead(writer, "AND id = 10")).toEqual({ onReplica: false, ids: [10] });
      const extended = await writer.query<{ v: string }>(
        "SELECT v FROM items WHERE tenant_id = $1 AND id = $2",
        ["alice", 10],
      );
      expect(extended.rows).toEqual([{ v: "mine" }]);
      await withClient(async (other) => {
        expect(await aliceRead(other, "AND id = 10")).toEqual({ onReplica: true, ids: [] });
      });
      // Probes after the write resolve its fence; the paused replica stays behind it.
      await health().probeNow();
      await health().probeNow();
      expect(await aliceRead(writer, "AND id = 10")).toEqual({ onReplica: false, ids: [10] });
      await writer.query("BEGIN");
      await writer.query("INSERT INTO items (tenant_id, id, v) VALUES ('alice', 11, 'in a block')");
      await writer.query("COMMIT");
      expect(await aliceRead(writer, "AND id >= 10")).toEqual({ onReplica: false, ids: [10, 11] });
      await replicaDirect.query("SELECT pg_wal_replay_resume()");
      await replicaCaughtUp();
      // Once the replica replayed past the write, the writer's reads go back to it.
      await until(
        async () => (await aliceRead(writer, "AND id >= 10")).onReplica,
        "the writer reads the replica again",
      );
      expect(await aliceRead(writer, "AND id >= 10")).toEqual({ onReplica: true, ids: [10, 11] });
    } finally {
      await replicaDirect.query("SELECT pg_wal_replay_resume()");
      await writer.end();
    }
  });

  it("takes a replica out of service with DRAIN and back with UNDRAIN", async () => {
    await withClient(async (c) => {
      const drained = await c.query(`DRAIN ${replicaAddress()}`);
      expect(drained.rows).toEqual([
        { region: "eu-west", endpoint: replicaAddress(), health: "up", drained: "yes" },
      ]);
      expect((await aliceRead(c)).onReplica).toBe(false);
      const shown = await c.query<{ endpoint: string; drained: string }>("SHOW HEALTH");
      expect(shown.rows.find((row) => row.endpoint === replicaAddress())?.drained).toBe("yes");
      const primary = `127.0.0.1:${cluster.servers[0]!.port}`;
      await expect(c.query(`DRAIN ${primary}`)).rejects.toMatchObject({ code: "55000" });
      await expect(c.query("DRAIN 127.0.0.1:1")).rejects.toMatchObject({ code: "42704" });
      await expect(c.query("DRAIN")).rejects.toMatchObject({ code: "42601" });
      const undrained = await c.query(`UNDRAIN ${replicaAddress()}`);
      expect(undrained.rows[0]).toMatchObject({ drained: "no" });
      expect((await aliceRead(c)).onReplica).toBe(true);
    });
  });

  it("says in ROUTE whether a read would run on a replica", async () => {
    await withClient(async (c) => {
      const read = await c.query<{ field: string; value: string }>(
        "ROUTE SELECT * FROM items WHERE tenant_id = 'alice'",
      );
      expect(read.rows.find((row) => row.field === "replica")?.value).toContain(replicaAddress());
      const locked = await c.query<{ field: string; value: string }>(
        "ROUTE SELECT * FROM items WHERE tenant_id = 'alice' FOR UPDATE",
      );
      expect(locked.rows.find((row) => row.field === "replica")?.value).toContain("locking-clause");
    });
  });

  it("shows a primary that reports recovery in SHOW HEALTH and raises role_mismatch, promoting nothing", async () => {
    const [eu, us] = cluster.servers;
    // The topology names the standby as the primary and the primary as its replica.
    const swapped = await startProxy({
      // Its own node name: the first proxy of the file, over the same servers, holds the default one.
      config: parseConfig(
        regionsToml(replica.port, eu!.port, us!.port).replace("[server]\n", '[server]\nnode = "swapped"\n'),
        "swapped.toml",
      ),
      directory: new MemoryDirectory([["alice", "eu-west"]]),
      logLevel: "silent",
      port: 0,
      shutdownTimeoutMs: 200,
    });
    const c = new pg.Client({
      host: swapped.host,
      port: swapped.port,
      user: "postgres",
      database: "postgres",
    });
    await c.connect();
    try {
      const health = await c.query<{ role: string; endpoint: string; in_recovery: string }>("SHOW HEALTH");
      expect(health.rows.find((row) => row.endpoint === replicaAddress())).toMatchObject({
        role: "primary",
        in_recovery: "yes",
      });
      const alerts = await c.query<{ name: string; subject: string }>("SHOW ALERTS");
      expect(alerts.rows).toContainEqual(
        expect.objectContaining({ name: "role_mismatch", subject: replicaAddress() }),
      );
      // The "replica" is out of recovery: it serves no reads, and nothing is promoted or changed.
      const read = await c.query<{ r: boolean }>(
        "SELECT pg_is_in_recovery() AS r FROM items WHERE tenant_id = 'alice' LIMIT 1",
      );
      expect(read.rows[0]?.r).toBe(true);
      expect((await replicaDirect.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows[0]!.r).toBe(
        true,
      );
    } finally {
      await c.end();
      await swapped.close({ timeoutMs: 200 });
    }
  });

  it("sends reads to the primary while the replica is stopped, and back once it returns", async () => {
    await replica.stopServer("immediate");
    try {
      await withClient(async (c) => {
        expect(await aliceRead(c)).toEqual({ onReplica: false, ids: [1, 2, 10, 11] });
      });
      await until(() => health().status(replicaAddress())?.state === "down", "the replica is down");
    } finally {
      await replica.startServer();
      replicaDirect = new pg.Client({
        host: replica.host,
        port: replica.port,
        user: "postgres",
        database: "postgres",
      });
      replicaDirect.on("error", () => {});
      await replicaDirect.connect();
    }
    await until(() => health().status(replicaAddress())?.state === "up", "the replica is up again");
    await until(
      async () => withClient(async (c) => (await aliceRead(c)).onReplica),
      "reads reach the replica",
    );
  });

  it("never lets a replica answer while its primary is down: the read fails with 08001 and says so", async () => {
    await replicaCaughtUp();
    await cluster.stopServer(0, "immediate");
    await until(() => health().primaryOf("eu-west")?.state === "down", "the primary is down");
    expect(health().status(replicaAddress())).toMatchObject({ state: "up", inRecovery: true });
    await withClient(async (c) => {
      const failure = await c
        .query("SELECT id FROM items WHERE tenant_id = 'alice'")
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "08001" });
      expect((failure as Error).message).toContain('of region "eu-west" is down');
      // Another region is unaffected.
      const other = await c.query("SELECT count(*)::int AS n FROM items WHERE tenant_id = 'bob'");
      expect(other.rows).toEqual([{ n: 0 }]);
    });
  });
});
