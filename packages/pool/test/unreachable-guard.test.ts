import { encodeQuery, type PgError } from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import { afterEach, describe, expect, it } from "vitest";
import {
  BackendConnection,
  type BackendEndpoint,
  type BackendHealth,
  type HealthEvent,
  Pool,
  StateChangeCause,
  type UnreachableChange,
  UnreachableGuard,
} from "../src/index.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let frozen = false;

async function backend(): Promise<{ fake: FakeBackend; endpoint: BackendEndpoint }> {
  const fake = await FakeBackend.start({
    rules: [{ match: /slow/, reply: { columns: ["n"], rows: [["1"]], delayMs: 1_500 } }],
    failures: { stallOn: () => frozen },
  });
  cleanups.push(() => fake.close());
  cleanups.push(() => {
    frozen = false;
  });
  return {
    fake,
    endpoint: {
      region: "eu",
      role: "primary",
      host: "127.0.0.1",
      port: fake.port,
      database: "postgres",
      user: "postgres",
    },
  };
}

function guardFor(endpoint: BackendEndpoint, changes: UnreachableChange[] = []): UnreachableGuard {
  const guard = new UnreachableGuard({
    endpoints: [endpoint],
    timeoutMs: 400,
    checkEveryMs: 50,
    keepaliveMs: 1_000,
    onChange: (change) => changes.push(change),
  });
  cleanups.push(() => guard.close());
  return guard;
}

function poolFor(endpoint: BackendEndpoint, guard: UnreachableGuard): Pool {
  const pool = new Pool({
    key: { host: endpoint.host, port: endpoint.port, database: "postgres", user: "postgres" },
    max: 4,
    connect: guard.wrap((options) => BackendConnection.connect(options)),
  });
  cleanups.push(() => pool.close({ timeoutMs: 100 }));
  return pool;
}

/** Resolves with the error a connection broke with. */
function brokenWith(connection: BackendConnection): Promise<PgError> {
  return new Promise((resolve) => connection.onBroken(resolve));
}

describe("UnreachableGuard", () => {
  it("breaks a connection whose backend stopped answering, fails new ones at once, and lifts when it answers", async () => {
    const { endpoint } = await backend();
    const changes: UnreachableChange[] = [];
    const guard = guardFor(endpoint, changes);
    const pool = poolFor(endpoint, guard);
    const lease = await pool.acquire();
    frozen = true;
    const started = Date.now();
    const broken = brokenWith(lease.connection);
    lease.connection.write(encodeQuery({ sql: "SELECT 1" }));
    const error = await broken;
    const waited = Date.now() - started;
    expect(error.code).toBe("08006");
    expect(error.message).toContain('region "eu"');
    expect(waited).toBeGreaterThanOrEqual(400);
    expect(waited).toBeLessThan(1_500);
    lease.discard("broken");
    expect(guard.isUnreachable(`127.0.0.1:${endpoint.port}`)).toBe(true);
    expect(changes.map((change) => [change.unreachable, change.broken])).toEqual([[true, 1]]);

    const fast = Date.now();
    await expect(pool.acquire()).rejects.toMatchObject({ code: "08001" });
    expect(Date.now() - fast).toBeLessThan(100);

    frozen = false;
    const until = Date.now() + 5_000;
    while (guard.isUnreachable(`127.0.0.1:${endpoint.port}`) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(guard.isUnreachable(`127.0.0.1:${endpoint.port}`)).toBe(false);
    expect(changes.at(-1)?.unreachable).toBe(false);
    await using again = await pool.acquire();
    expect((await again.connection.simpleQuery("SELECT 1")).rows).toEqual([["1"]]);
  });

  it("declares a backend unreachable after its endpoint's own timeout, not the guard's", async () => {
    const { endpoint } = await backend();
    const guard = new UnreachableGuard({
      endpoints: [{ ...endpoint, timeoutMs: 300 }],
      timeoutMs: 60_000,
      checkEveryMs: 50,
    });
    cleanups.push(() => guard.close());
    const pool = poolFor(endpoint, guard);
    const lease = await pool.acquire();
    frozen = true;
    const started = Date.now();
    const broken = brokenWith(lease.connection);
    lease.connection.write(encodeQuery({ sql: "SELECT 1" }));
    const error = await broken;
    const waited = Date.now() - started;
    expect(error.code).toBe("08006");
    expect(waited).toBeGreaterThanOrEqual(300);
    // Generous for a loaded machine, and far below the guard's minute.
    expect(waited).toBeLessThan(5_000);
    lease.discard("broken");
  });

  it("lets a statement of a healthy backend run longer than the timeout", async () => {
    const { endpoint } = await backend();
    const changes: UnreachableChange[] = [];
    const guard = guardFor(endpoint, changes);
    const pool = poolFor(endpoint, guard);
    await using lease = await pool.acquire();
    const started = Date.now();
    const result = await lease.connection.simpleQuery("SELECT slow");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(result.rows).toEqual([["1"]]);
    expect(changes).toEqual([]);
  });

  it("trips when the health monitor marks the backend down after failed probes, and lifts when it is up", async () => {
    const { endpoint } = await backend();
    const guard = guardFor(endpoint);
    const pool = poolFor(endpoint, guard);
    const listeners = new Set<(event: HealthEvent) => void>();
    guard.watch({
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    });
    const emit = (state: "up" | "down", cause: StateChangeCause) => {
      const health = {
        region: "eu",
        role: "primary",
        address: `127.0.0.1:${endpoint.port}`,
        state,
        lastError: "probe timed out",
      } as unknown as BackendHealth;
      for (const listener of listeners) listener({ type: "state", backend: health, previous: "up", cause });
    };
    const lease = await pool.acquire();
    const broken = brokenWith(lease.connection);
    // A failure reported by the data path alone does not break anything.
    emit("down", StateChangeCause.reportedFailure);
    expect(guard.isUnreachable(`127.0.0.1:${endpoint.port}`)).toBe(false);
    emit("down", StateChangeCause.probeFailures);
    const error = await broken;
    expect(error.code).toBe("08006");
    expect(error.message).toContain("health monitor");
    lease.discard("broken");
    expect(guard.isUnreachable(`127.0.0.1:${endpoint.port}`)).toBe(true);
    emit("up", StateChangeCause.probe);
    expect(guard.isUnreachable(`127.0.0.1:${endpoint.port}`)).toBe(false);
  });
});
