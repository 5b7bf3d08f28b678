import { MemoryDirectory, parseConfig } from "@geo/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { regionsToml } from "./support/fake-regions.js";
import { ServerFreezer } from "./support/frozen-server.js";
import { directoryEntries, type RealRegions, startRealRegions } from "./support/real-regions.js";
import { timed } from "./support/timed-query.js";

/**
 * A region whose PostgreSQL is frozen with SIGSTOP: its port stays open and the kernel keeps
 * accepting connections, but nothing answers. us-east (bob) is frozen; eu-west is home.
 */

/** GEO_UNREACHABLE_MS=5000 measures the default. */
const UNREACHABLE_MS = Number(process.env.GEO_UNREACHABLE_MS ?? 2_000);
/** Timeout, up to two checks to notice the wait, slack for a loaded 2-core machine. */
const BOUND_MS = UNREACHABLE_MS + 2_500;
const US_EAST = 1;

let regions: RealRegions;
/** Frozen without blocking the event loop the proxy under test runs on; a failed test still resumes. */
const freezer = new ServerFreezer();

beforeAll(async () => {
  regions = await startRealRegions(`\n[pool]\nunreachable_timeout_ms = ${UNREACHABLE_MS}\n`);
});

afterAll(async () => {
  resume();
  await regions?.close();
});

async function freeze(index: number): Promise<void> {
  await freezer.freeze(regions.cluster.servers[index]!.dataDir);
}

function resume(): void {
  freezer.resume();
}

async function client(proxy: RunningProxy = regions.proxy): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port: proxy.port, user: "postgres", database: "postgres" });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

/** Polls a keyed read of bob (us-east) through the proxy; resolves with the time it took to succeed. */
async function servesAgain(proxy: RunningProxy = regions.proxy): Promise<number> {
  const started = Date.now();
  for (;;) {
    const c = await client(proxy);
    const outcome = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1");
    await c.end().catch(() => undefined);
    if (outcome.error === undefined) return Date.now() - started;
    if (Date.now() - started > 20_000) throw new Error(`us-east still failing: ${outcome.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a region frozen with SIGSTOP", () => {
  it("fails its statement within the bound, then new ones at once; other regions serve; it serves after SIGCONT", async () => {
    const c = await client();
    expect((await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1")).rows).toEqual([
      ["bob-1"],
    ]);
    await freeze(US_EAST);
    const stuck = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 2");
    console.log(`SIGSTOP: a statement to the frozen region failed after ${stuck.ms} ms`);
    expect(stuck.error?.code).toBe("08006");
    expect(stuck.error?.message).toContain("us-east");
    expect(stuck.ms).toBeLessThan(BOUND_MS);

    // The same session goes on with other regions.
    expect((await timed(c, "SELECT name FROM users WHERE tenant_id = 'alice' AND id = 1")).rows).toEqual([
      ["alice-1"],
    ]);
    const fast = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 3");
    console.log(`SIGSTOP: the next statement to it failed after ${fast.ms} ms`);
    expect(fast.error?.code).toMatch(/^08/);
    expect(fast.error?.message).toContain("us-east");
    expect(fast.error?.hint).toBeTruthy();
    expect(fast.ms).toBeLessThan(1_000);
    const across = await timed(c, "SELECT count(*) FROM users");
    expect(across.error?.code).toMatch(/^08/);
    expect(across.error?.message).toContain("us-east");
    expect(across.ms).toBeLessThan(1_000);
    const other = await client();
    expect(
      (await timed(other, "SELECT name FROM users WHERE tenant_id = 'chandra' AND id = 1")).rows,
    ).toEqual([["chandra-1"]]);
    await other.end();

    resume();
    console.log(`SIGCONT: the region served again after ${await servesAgain()} ms`);
    expect((await timed(c, "SELECT count(*) FROM users")).error).toBeUndefined();
    await c.end();
  }, 60_000);

  it("fails a read across regions that includes it within the bound", async () => {
    const c = await client();
    const before = await timed(c, "SELECT count(*) FROM users");
    expect(before.error).toBeUndefined();
    await freeze(US_EAST);
    const across = await timed(c, "SELECT tenant_id, count(*) FROM users GROUP BY tenant_id ORDER BY 1");
    console.log(`SIGSTOP: a read across regions failed after ${across.ms} ms`);
    expect(across.error?.code).toMatch(/^08/);
    expect(across.error?.message).toContain("us-east");
    expect(across.ms).toBeLessThan(BOUND_MS);
    resume();
    await servesAgain();
    expect((await timed(c, "SELECT count(*) FROM users")).rows).toEqual(before.rows);
    await c.end();
  }, 60_000);

  it("never cuts short a long statement of a healthy region", async () => {
    const c = await client();
    const slow = await timed(c, "SELECT pg_sleep(5), name FROM users WHERE tenant_id = 'bob' AND id = 1");
    expect(slow.error).toBeUndefined();
    expect(slow.rows).toEqual([["", "bob-1"]]);
    expect(slow.ms).toBeGreaterThanOrEqual(5_000);
    await c.end();
  }, 30_000);
});

describe("a region the health monitor marks down", () => {
  let proxy: RunningProxy;

  beforeAll(async () => {
    // The guard's own timeout is out of reach here: only the monitor (on with the admin port) acts.
    const config = parseConfig(
      regionsToml(
        regions.cluster.servers.map((server) => server.port),
        "\n[pool]\nunreachable_timeout_ms = 600000\n\n[admin]\nport = 0\n",
        // Its own node name: the file's first proxy runs over the same servers.
      ).replace("[server]\n", '[server]\nnode = "monitored"\n'),
      "monitor.toml",
    );
    proxy = await startProxy({
      config,
      directory: new MemoryDirectory(directoryEntries()),
      logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
      port: 0,
      shutdownTimeoutMs: 500,
    });
  });

  afterAll(async () => {
    resume();
    await proxy?.close({ timeoutMs: 200 });
  });

  it("breaks the connections waiting on it once it is marked down, and SHOW HEALTH says so", async () => {
    const c = await client(proxy);
    expect(
      (await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1")).error,
    ).toBeUndefined();
    await freeze(US_EAST);
    const stuck = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 2");
    console.log(`SIGSTOP, health monitor: a statement to the frozen region failed after ${stuck.ms} ms`);
    expect(stuck.error?.code).toBe("08006");
    expect(stuck.error?.message).toContain("us-east");
    // Three failed probes a second apart, each allowed a second.
    expect(stuck.ms).toBeLessThan(8_000);
    const health = await timed(c, "SHOW HEALTH");
    // Rows are arrays here: region, home, role, endpoint, health, ...
    const down = (health.rows as unknown[][]).filter((row) => row[4] === "down");
    expect(down.map((row) => [row[0], row[2]])).toEqual([["us-east", "primary"]]);
    // The reason is the unanswered probe, named with its timeout.
    const alerts = await timed(c, "SHOW ALERTS");
    expect(JSON.stringify(alerts.rows)).toMatch(
      /region \\"us-east\\" is down: the health monitor marked it down \(health probe of backend \S+ did not answer within 1000 ms\)/,
    );
    const fast = await timed(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 3");
    expect(fast.error?.code).toMatch(/^08/);
    expect(fast.ms).toBeLessThan(1_000);
    resume();
    console.log(`SIGCONT, health monitor: the region served again after ${await servesAgain(proxy)} ms`);
    await c.end();
  }, 60_000);
});
