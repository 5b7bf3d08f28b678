import { RawClient } from "@geo/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegionName } from "./support/fake-regions.js";
import type { RealRegions } from "./support/real-regions.js";
import { startScatterRegions, textClient } from "./support/scatter-regions.js";

// A scatter's region connections are legs of the session's LegSet: given back only once every
// ReadyForQuery is in, closed when cancelled or still answering. Real PostgreSQL in three regions,
// pools of 3 connections, so the next clients get the connections the last one used.

let regions: RealRegions;

beforeAll(async () => {
  regions = await startScatterRegions();
});
afterAll(async () => {
  await regions?.close();
});

function rawClient(): Promise<RawClient> {
  return RawClient.connect({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "shop",
  });
}

/** The proxy's backends in each region (the endpoints' database, postgres) matching `where`, by pid. */
async function proxyBackends(where: string): Promise<Map<RegionName, number[]>> {
  const found = new Map<RegionName, number[]>();
  for (const [region, direct] of Object.entries(regions.direct) as [RegionName, pg.Client][]) {
    const result = await direct.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = 'postgres' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND ${where}`,
    );
    found.set(
      region,
      result.rows.map((row: { pid: number }) => row.pid),
    );
  }
  return found;
}

async function waitFor(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

const pidsOf = (found: Map<RegionName, number[]>): number[] => [...found.values()].flat();

async function stillConnected(pids: readonly number[]): Promise<number[]> {
  const all = pidsOf(await proxyBackends("true"));
  return pids.filter((pid) => all.includes(pid));
}

describe("a scatter's connections, owned by the session's LegSet", () => {
  it("closes the regions' connections of a client that leaves mid-scatter, and the next clients on the pools get their own answers", async () => {
    const leaving = await rawClient();
    const marker = "SELECT count(*) FROM measures WHERE pg_sleep(0.31) IS NOT NULL";
    void leaving.query(marker).catch(() => undefined);
    const running = () => proxyBackends("state = 'active' AND query LIKE '%pg_sleep(0.31)%'");
    expect(await waitFor(async () => pidsOf(await running()).length === 3)).toBe(true);
    const pids = pidsOf(await running());
    await leaving.close();
    // Cancelled, then closed: none of them goes back to a pool where its late answer (or a late
    // cancel) could reach another client.
    expect(await waitFor(async () => (await stillConnected(pids)).length === 0)).toBe(true);
    const clients = await Promise.all(Array.from({ length: 5 }, () => textClient(regions.proxy.port)));
    try {
      const answers = await Promise.all(
        clients.map(async (client, i) => {
          const total = await client.query("SELECT count(*) AS n FROM measures");
          const one = await client.query("SELECT count(*) AS n FROM measures WHERE tenant_id = $1", [
            ["alice", "bob", "chandra", "dmitri", "elena"][i],
          ]);
          const top = await client.query(
            "SELECT max(id) AS m FROM measures WHERE tenant_id IN ('alice', 'bob')",
          );
          return [total.rows[0].n, one.rows[0].n, top.rows[0].m];
        }),
      );
      expect(answers).toEqual(Array.from({ length: 5 }, () => ["120", "6", "6"]));
    } finally {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    }
  });

  it("reads the block's own write across regions, gives the block's connections back to its statements, and ROLLBACK undoes the write everywhere", async () => {
    const client = await textClient(regions.proxy.port);
    try {
      await client.query("BEGIN");
      await client.query("UPDATE measures SET qty = 424242 WHERE tenant_id = 'alice' AND id = 1");
      const seen = await client.query("SELECT count(*) AS n FROM measures WHERE qty = 424242");
      expect(seen.rows).toEqual([{ n: "1" }]);
      // The same leg of the block, read by the relay again after the scatter read it.
      const own = await client.query("SELECT qty FROM measures WHERE tenant_id = 'alice' AND id = 1");
      expect(own.rows).toEqual([{ qty: "424242" }]);
      const top = await client.query(
        "SELECT tenant_id, qty FROM measures ORDER BY qty DESC NULLS LAST, tenant_id, id LIMIT 1",
      );
      expect(top.rows).toEqual([{ tenant_id: "alice", qty: "424242" }]);
      await client.query("ROLLBACK");
      const after = await client.query("SELECT count(*) AS n FROM measures WHERE qty = 424242");
      expect(after.rows).toEqual([{ n: "0" }]);
      // Nothing of the block is left open in any region.
      expect(
        await waitFor(
          async () => pidsOf(await proxyBackends("state LIKE 'idle in transaction%'")).length === 0,
        ),
      ).toBe(true);
      const direct = await regions.direct["eu-west"].query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'postgres' AND backend_type = 'client backend' AND xact_start IS NOT NULL AND pid <> pg_backend_pid() AND state <> 'active'",
      );
      expect(direct.rows).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
    }
  });

  it("stops and closes the other regions when one fails mid-scatter, and the session and the pools go on", async () => {
    const client = await rawClient();
    try {
      // alice's rows are the first of eu-west's heap: that region fails at once, the others sleep.
      const started = Date.now();
      const failed = await client.query(
        "SELECT count(*) FROM measures WHERE CASE WHEN tenant_id = 'alice' THEN 1 / (id - id) = 1 ELSE pg_sleep(0.29) IS NOT NULL END",
      );
      expect(failed.error?.code).toBe("22012");
      expect(failed.status).toBe("I");
      // Without the cancel the other regions would run on for seconds (rows x 0.29 s).
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(
        await waitFor(
          async () =>
            pidsOf(await proxyBackends("state = 'active' AND query LIKE '%pg_sleep(0.29)%'")).length === 0,
        ),
      ).toBe(true);
      const after = await client.query("SELECT count(*) FROM measures");
      expect(after.rows).toEqual([["120"]]);
      const others = await Promise.all(Array.from({ length: 4 }, () => textClient(regions.proxy.port)));
      try {
        const answers = await Promise.all(
          others.map(async (other) => (await other.query("SELECT count(*) AS n FROM users")).rows[0].n),
        );
        expect(answers).toEqual(["60", "60", "60", "60"]);
      } finally {
        await Promise.all(others.map((other) => other.end().catch(() => undefined)));
      }
    } finally {
      await client.close();
    }
  });

  it("fails the block when a region fails mid-scatter, and ROLLBACK leaves every region clean", async () => {
    const client = await rawClient();
    try {
      await client.query("BEGIN");
      await client.query("UPDATE measures SET qty = 515151 WHERE tenant_id = 'bob' AND id = 2");
      const failed = await client.query(
        "SELECT count(*) FROM measures WHERE CASE WHEN tenant_id = 'alice' THEN 1 / (id - id) = 1 ELSE true END",
      );
      expect(failed.error?.code).toBe("22012");
      expect(failed.status).toBe("E");
      const refused = await client.query("SELECT 1");
      expect(refused.error?.code).toBe("25P02");
      const rolledBack = await client.query("ROLLBACK");
      expect(rolledBack.status).toBe("I");
      const after = await client.query("SELECT count(*) FROM measures WHERE qty = 515151");
      expect(after.rows).toEqual([["0"]]);
      expect(
        await waitFor(
          async () => pidsOf(await proxyBackends("state LIKE 'idle in transaction%'")).length === 0,
        ),
      ).toBe(true);
    } finally {
      await client.close();
    }
  });
});
