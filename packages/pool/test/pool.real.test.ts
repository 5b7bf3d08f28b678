import { BackendCode, encodeQuery } from "@geo/proto";
import { type PgCluster, type PgServer, startCluster } from "@geo/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BackendConnection, type Lease, Pool, type PoolOptions, PoolSet } from "../src/index.js";
import { rolesHba, rolesInitSql } from "./roles.js";

let cluster: PgCluster;
let server: PgServer;
let admin: BackendConnection;
const pools: Pool[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 1, hba: rolesHba, initSql: rolesInitSql });
  server = cluster.servers[0]!;
  admin = await BackendConnection.connect({
    host: server.host,
    port: server.port,
    database: "postgres",
    user: "postgres",
    connectTimeoutMs: 5_000,
  });
});

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close({ timeoutMs: 100 })));
});

afterAll(async () => {
  admin?.destroy();
  await cluster?.stop();
});

function makePool(overrides: Partial<PoolOptions> = {}): Pool {
  const pool = new Pool({
    key: { host: server.host, port: server.port, database: "postgres", user: "postgres" },
    ...overrides,
  });
  pools.push(pool);
  return pool;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(10);
  }
}

describe("Pool against real PostgreSQL", () => {
  it("hands out an idle connection at once with tryAcquire and null when none is idle", async () => {
    const pool = makePool({ max: 1 });
    expect(pool.tryAcquire()).toBeNull();
    const first = await pool.acquire();
    const pid = first.connection.processId;
    expect(pool.tryAcquire()).toBeNull();
    first.release();
    const again = pool.tryAcquire();
    expect(again?.connection.processId).toBe(pid);
    expect(pool.stats().busy).toBe(1);
    again?.release();
  });

  it("lends with tryAcquireIf only an idle connection the caller accepts, the most recent first, and counts nothing otherwise", async () => {
    const pool = makePool({ max: 2 });
    const older = await pool.acquire();
    const newer = await pool.acquire();
    const olderPid = older.connection.processId;
    const newerPid = newer.connection.processId;
    older.release();
    newer.release();
    const checkouts = pool.stats().checkouts;
    expect(pool.tryAcquireIf(() => false)).toBeNull();
    expect(pool.stats()).toMatchObject({ checkouts, idle: 2, busy: 0 });
    // Not the most recently used one: the one the caller takes, further down.
    const chosen = pool.tryAcquireIf((connection) => connection.processId === olderPid);
    expect(chosen?.connection.processId).toBe(olderPid);
    expect(pool.stats()).toMatchObject({ checkouts: checkouts + 1, idle: 1, busy: 1 });
    chosen?.release();
    // The one left idle was not moved: the most recent is still first.
    const first = pool.tryAcquireIf(() => true);
    expect(first?.connection.processId).toBe(olderPid);
    const second = pool.tryAcquireIf(() => true);
    expect(second?.connection.processId).toBe(newerPid);
    expect(pool.tryAcquireIf(() => true)).toBeNull();
    first?.release();
    second?.release();
  });

  it("reuses a released connection instead of opening another", async () => {
    const pool = makePool({ max: 4 });
    const first = await pool.acquire();
    const pid = first.connection.processId;
    first.release();
    const second = await pool.acquire();
    expect(second.connection.processId).toBe(pid);
    second.release();
    expect(pool.stats()).toMatchObject({ created: 1, checkouts: 2, idle: 1, busy: 0, total: 1 });
  });

  it("logs pools in with a password role", async () => {
    const pool = makePool({
      key: { host: server.host, port: server.port, database: "postgres", user: "scram_user" },
      password: "scram-secret",
    });
    expect(pool.name).toBe(`${server.host}:${server.port}/postgres as scram_user`);
    await using lease = await pool.acquire();
    expect((await lease.connection.simpleQuery("SELECT current_user")).rows).toEqual([["scram_user"]]);
  });

  it("never opens more than max connections and serves waiters in FIFO order", async () => {
    const pool = makePool({ max: 1, checkoutTimeoutMs: 5_000 });
    const holder = await pool.acquire();
    const order: string[] = [];
    const waiting = ["a", "b", "c"].map((name) =>
      pool.acquire().then((lease) => {
        order.push(name);
        return lease;
      }),
    );
    await sleep(50);
    expect(pool.stats()).toMatchObject({ total: 1, busy: 1, waiting: 3 });
    holder.release();
    for (let i = 0; i < 3; i++) {
      const lease = await waiting[i]!;
      expect(lease.waitedMs).toBeGreaterThan(0);
      lease.release();
    }
    expect(order).toEqual(["a", "b", "c"]);
    expect(pool.stats()).toMatchObject({ created: 1, total: 1, waiting: 0 });
  });

  it("fails a checkout with 57014 naming the pool once the checkout timeout passes", async () => {
    const pool = makePool({ max: 1, checkoutTimeoutMs: 100 });
    const holder = await pool.acquire();
    const started = Date.now();
    const error = await pool.acquire().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "57014" });
    expect((error as Error).message).toContain(pool.name);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(pool.stats()).toMatchObject({ timeouts: 1, waiting: 0 });
    holder.release();
  });

  it("refuses a checkout at once with 53300 when the waiter queue is full", async () => {
    const pool = makePool({ max: 1, maxWaiters: 1, checkoutTimeoutMs: 2_000 });
    const holder = await pool.acquire();
    const queued = pool.acquire();
    const error = await pool.acquire().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "53300" });
    expect((error as Error).message).toContain(pool.name);
    expect(pool.stats().queueFull).toBe(1);
    holder.release();
    (await queued).release();
  });

  it("still opens new connections below max when maxWaiters is 0", async () => {
    const pool = makePool({ max: 2, maxWaiters: 0 });
    const first = await pool.acquire();
    const second = await pool.acquire();
    await expect(pool.acquire()).rejects.toMatchObject({ code: "53300" });
    first.release();
    second.release();
  });

  it("hands the next client a reading socket even if the last one left it paused", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    await new Promise<void>((resolve) => {
      first.connection.setReceiver({
        onFrame(frame) {
          if (frame.code === BackendCode.ReadyForQuery) {
            first.connection.pause();
            resolve();
          }
        },
      });
      first.connection.write(encodeQuery({ sql: "SELECT 1" }));
    });
    first.release();
    await using second = await pool.acquire();
    expect(second.connection.isPaused).toBe(false);
    expect((await second.connection.simpleQuery("SELECT 2", { timeoutMs: 2_000 })).rows).toEqual([["2"]]);
  });

  it("discards an idle connection whose backend was terminated and opens a new one", async () => {
    const pool = makePool({ max: 2 });
    const lease = await pool.acquire();
    const pid = lease.connection.processId;
    lease.release();
    await admin.simpleQuery(`SELECT pg_terminate_backend(${pid})`);
    await until(() => pool.stats().discarded === 1);
    expect(pool.stats()).toMatchObject({ idle: 0, total: 0 });
    await using next = await pool.acquire();
    expect(next.connection.processId).not.toBe(pid);
    expect(next.connection.usable).toBe(true);
  });

  it("discards a leased connection that broke instead of returning it", async () => {
    const pool = makePool({ max: 2 });
    const lease = await pool.acquire();
    const pid = lease.connection.processId;
    await admin.simpleQuery(`SELECT pg_terminate_backend(${pid})`);
    await until(() => lease.connection.broken);
    lease.release();
    expect(pool.stats()).toMatchObject({ discarded: 1, idle: 0, busy: 0, total: 0 });
    await using next = await pool.acquire();
    expect(next.connection.processId).not.toBe(pid);
  });

  it("resets a connection after SET so the setting never reaches the next lease", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    const pid = first.connection.processId;
    const original = (await first.connection.simpleQuery("SHOW TimeZone")).rows[0]![0];
    await first.connection.simpleQuery("SET TimeZone = 'Asia/Tokyo'");
    first.connection.appliedSettings.set("TimeZone", "Asia/Tokyo");
    first.connection.preparedStatements.set("geo_1", {});
    first.connection.markDirty("settings");
    first.release();
    await using second = await pool.acquire();
    expect(second.connection.processId).toBe(pid);
    expect((await second.connection.simpleQuery("SHOW TimeZone")).rows[0]![0]).toBe(original);
    expect(second.connection.appliedSettings.size).toBe(0);
    // RESET ALL keeps server-side prepared statements, so the bookkeeping keeps them too.
    expect(second.connection.preparedStatements.has("geo_1")).toBe(true);
    expect(second.connection.dirty).toBe("none");
    expect(pool.stats().resets).toBe(1);
  });

  it("resets SET ROLE and SET SESSION AUTHORIZATION with the settings, which RESET ALL alone leaves", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    await first.connection.simpleQuery("SET SESSION AUTHORIZATION md5_user");
    await first.connection.simpleQuery("RESET SESSION AUTHORIZATION; SET ROLE scram_user");
    await first.connection.simpleQuery("SET SESSION AUTHORIZATION clear_user");
    // What a rolled-back block leaves: the proxy no longer knows the settings, only that some changed.
    first.connection.markDirty("settings");
    first.release();
    await using second = await pool.acquire();
    const row = (
      await second.connection.simpleQuery("SELECT current_user, session_user, current_setting('role')")
    ).rows[0]!;
    expect(row).toEqual(["postgres", "postgres", "none"]);
  });

  it("hands the proxy's own statements a connection at the pool's settings, not the last client's", async () => {
    const pool = makePool({ max: 2 });
    const carrying = await pool.acquire();
    const plain = await pool.acquire();
    // What a client's replay leaves on a connection in transaction pooling: kept, not reset.
    await carrying.connection.simpleQuery("SET ROLE scram_user; SET default_transaction_read_only = on");
    carrying.connection.appliedSettings.set("role", "SET ROLE scram_user");
    carrying.connection.appliedSettings.set(
      "default_transaction_read_only",
      "SET default_transaction_read_only = on",
    );
    const plainPid = plain.connection.processId;
    plain.release();
    carrying.release();
    // The clean one is taken although the carrying one was used more recently.
    const first = await pool.acquireAtDefaults();
    expect(first.connection.processId).toBe(plainPid);
    // With only the carrying one left, it is reset before it is handed out.
    const second = await pool.acquireAtDefaults();
    expect(second.connection.processId).not.toBe(plainPid);
    const row = (
      await second.connection.simpleQuery(
        "SELECT current_user, current_setting('default_transaction_read_only')",
      )
    ).rows[0]!;
    expect(row).toEqual(["postgres", "off"]);
    expect(second.connection.appliedSettings.size).toBe(0);
    first.release();
    second.release();
  });

  it("resets for the proxy a connection whose last client's role was dropped since", async () => {
    const pool = makePool({ max: 1 });
    await admin.simpleQuery("DROP ROLE IF EXISTS pool_gone_role; CREATE ROLE pool_gone_role");
    const first = await pool.acquire();
    await first.connection.simpleQuery("SET ROLE pool_gone_role");
    first.connection.appliedSettings.set("role", "SET ROLE pool_gone_role");
    first.release();
    await admin.simpleQuery("DROP ROLE pool_gone_role");
    // A statement on that connection as it stands fails: the role it runs as is gone.
    const raw = await pool.acquire();
    await expect(raw.connection.simpleQuery("SELECT current_user")).rejects.toMatchObject({ code: "42704" });
    raw.release();
    await using lease = await pool.acquireAtDefaults();
    expect((await lease.connection.simpleQuery("SELECT current_user")).rows[0]![0]).toBe("postgres");
  });

  it("runs DISCARD ALL on release({ reset: true }): prepared statements and temp tables are gone", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    await first.connection.simpleQuery("PREPARE sel AS SELECT 1; CREATE TEMP TABLE scratch (x int)");
    first.connection.preparedStatements.set("sel", {});
    first.release({ reset: true });
    await using second = await pool.acquire();
    expect(second.connection.preparedStatements.size).toBe(0);
    await expect(second.connection.simpleQuery("EXECUTE sel")).rejects.toMatchObject({ code: "26000" });
    await expect(second.connection.simpleQuery("SELECT * FROM scratch")).rejects.toMatchObject({
      code: "42P01",
    });
  });

  it("rolls back a transaction left open before the connection serves anyone else", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    await first.connection.simpleQuery("BEGIN; CREATE TABLE left_open (x int)");
    expect(first.connection.txStatus).toBe("T");
    first.release();
    await using second = await pool.acquire();
    expect(second.connection.txStatus).toBe("I");
    await expect(second.connection.simpleQuery("SELECT * FROM left_open")).rejects.toMatchObject({
      code: "42P01",
    });
  });

  it("discards a connection released while a reply is still in flight", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    first.connection.setReceiver({ onFrame: () => undefined });
    first.connection.write(encodeQuery({ sql: "SELECT pg_sleep(0.2)" }));
    first.release();
    expect(pool.stats()).toMatchObject({ discarded: 1, total: 0 });
    await using second = await pool.acquire();
    expect((await second.connection.simpleQuery("SELECT 1")).rows).toEqual([["1"]]);
  });

  it("discards a connection whose first statement answered while its second still runs", async () => {
    const pool = makePool({ max: 1 });
    const first = await pool.acquire();
    const pid = first.connection.processId;
    let ready = 0;
    first.connection.setReceiver({
      onFrame: (frame) => {
        if (frame.code === BackendCode.ReadyForQuery) ready++;
      },
    });
    first.connection.write([
      encodeQuery({ sql: "SET work_mem = '8MB'" }),
      encodeQuery({ sql: "SELECT pg_sleep(0.3)" }),
    ]);
    await until(() => ready === 1);
    expect(first.connection.isQuiescent).toBe(false);
    first.release();
    expect(pool.stats()).toMatchObject({ discarded: 1 });
    await using second = await pool.acquire();
    expect(second.connection.processId).not.toBe(pid);
    expect((await second.connection.simpleQuery("SELECT 42")).rows).toEqual([["42"]]);
  });

  it("closes idle connections beyond min after the idle timeout", async () => {
    const pool = makePool({ min: 1, max: 3, idleTimeoutMs: 100 });
    const leases = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    for (const lease of leases) lease.release();
    expect(pool.stats()).toMatchObject({ idle: 3, total: 3 });
    await until(() => pool.stats().total === 1);
    await sleep(150);
    expect(pool.stats()).toMatchObject({ idle: 1, total: 1, discarded: 2 });
  });

  it("opens min connections up front when warmed", async () => {
    const pool = makePool({ min: 2, max: 4 });
    await pool.warm();
    expect(pool.stats()).toMatchObject({ idle: 2, total: 2, created: 2 });
    const lease = await pool.acquire();
    expect(lease.waitedMs).toBe(0);
    lease.release();
    expect(pool.stats().created).toBe(2);
  });

  it("closes a connection that outlived maxLifetimeMs when it comes back", async () => {
    const pool = makePool({ max: 1, maxLifetimeMs: 50 });
    const first = await pool.acquire();
    const pid = first.connection.processId;
    await sleep(80);
    first.release();
    await using second = await pool.acquire();
    expect(second.connection.processId).not.toBe(pid);
  });

  it("releases a lease at the end of an await using scope", async () => {
    const pool = makePool({ max: 1 });
    let seen: Lease | undefined;
    {
      await using lease = await pool.acquire();
      seen = lease;
      expect(pool.stats().busy).toBe(1);
    }
    expect(seen.active).toBe(false);
    expect(pool.stats()).toMatchObject({ busy: 0, idle: 1 });
  });

  it("relays a checked-out connection's frames to its receiver", async () => {
    const pool = makePool({ max: 1 });
    await using lease = await pool.acquire();
    const codes: number[] = [];
    await new Promise<void>((resolve) => {
      lease.connection.setReceiver({
        onFrame(frame) {
          codes.push(frame.code);
          if (frame.code === BackendCode.ReadyForQuery) resolve();
        },
      });
      lease.connection.write(encodeQuery({ sql: "SELECT 1" }));
    });
    expect(String.fromCharCode(...codes)).toBe("TDCZ");
  });
});

describe("PoolSet against real PostgreSQL", () => {
  it("keys pools by endpoint, database and role and lists their stats", async () => {
    const set = new PoolSet({
      config: { max: 2 },
      credentials: (key) => (key.user === "md5_user" ? { password: "md5-secret" } : undefined),
    });
    const key = { host: server.host, port: server.port, database: "postgres", user: "postgres" };
    const md5Key = { ...key, user: "md5_user" };
    expect(set.get(key)).toBe(set.get({ ...key }));
    const lease = await set.get(md5Key).acquire();
    expect((await lease.connection.simpleQuery("SELECT current_user")).rows).toEqual([["md5_user"]]);
    lease.release();
    expect(set.stats().map((stats) => [stats.name, stats.total])).toEqual([
      [`${server.host}:${server.port}/postgres as postgres`, 0],
      [`${server.host}:${server.port}/postgres as md5_user`, 1],
    ]);
    await set.close();
  });

  it("closes gracefully: waits for leases, fails waiters with 57P01 and refuses new checkouts", async () => {
    const set = new PoolSet({ config: { max: 1, checkoutTimeoutMs: 5_000 } });
    const pool = set.get({ host: server.host, port: server.port, database: "postgres", user: "postgres" });
    const lease = await pool.acquire();
    const waiter = pool.acquire().catch((e: unknown) => e);
    const closing = set.close({ timeoutMs: 5_000 });
    expect(await waiter).toMatchObject({ code: "57P01" });
    await expect(pool.acquire()).rejects.toMatchObject({ code: "57P01" });
    await sleep(50);
    expect(lease.connection.usable).toBe(true);
    lease.release();
    await closing;
    expect(lease.connection.usable).toBe(false);
    expect(pool.stats().total).toBe(0);
  });

  it("warms pools it creates when the configuration says so", async () => {
    const set = new PoolSet({ config: { min: 1, max: 2, warm: true } });
    const pool = set.get({ host: server.host, port: server.port, database: "postgres", user: "postgres" });
    await until(() => pool.stats().idle === 1);
    expect(pool.stats().created).toBe(1);
    await set.close();
  });
});
