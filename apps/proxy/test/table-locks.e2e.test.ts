import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { sqlState } from "./support/sql-state.js";

// LOCK TABLE and REFRESH MATERIALIZED VIEW reach every copy of what they name, as maintenance
// commands do: a lock taken in the home region alone would leave the rows of the other regions
// unlocked, and a view refreshed there alone would leave the others stale.
let regions: RealRegions;
let client: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions(
    '\n[[tables]]\ntable = "order_counts"\nplacement = "geo_partitioned"\nkey = "tenant_id"\n',
  );
  for (const direct of Object.values(regions.direct)) {
    await direct.query(
      "CREATE MATERIALIZED VIEW order_counts AS SELECT tenant_id, count(*)::int AS n FROM orders GROUP BY tenant_id",
    );
  }
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
});
afterAll(async () => {
  await client?.end().catch(() => undefined);
  await regions?.close();
});

/** How many granted locks of `mode` on `table` each region's server holds, for other backends. */
async function locksHeld(table: string, mode: string): Promise<Record<RegionName, number>> {
  const held = {} as Record<RegionName, number>;
  for (const region of REGIONS) {
    const result = await regions.direct[region].query(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE c.relname = $1 AND l.mode = $2 AND l.granted AND l.pid <> pg_backend_pid()`,
      [table, mode],
    );
    held[region] = result.rows[0].n as number;
  }
  return held;
}

const everywhere = (n: number): Record<RegionName, number> =>
  Object.fromEntries(REGIONS.map((region) => [region, n])) as Record<RegionName, number>;

describe("LOCK TABLE", () => {
  it("locks a geo-partitioned table in every region until the block commits", async () => {
    await client.query("BEGIN");
    expect((await client.query("LOCK TABLE orders IN EXCLUSIVE MODE")).command).toBe("LOCK");
    expect(await locksHeld("orders", "ExclusiveLock")).toEqual(everywhere(1));
    // The block goes on, with the lock held, and commits in every region.
    await client.query("UPDATE orders SET status = status WHERE tenant_id = 'alice'");
    await client.query("COMMIT");
    expect(await locksHeld("orders", "ExclusiveLock")).toEqual(everywhere(0));
  });

  it("blocks another client's write in a region other than home while held", async () => {
    await client.query("BEGIN");
    await client.query("LOCK TABLE orders IN EXCLUSIVE MODE");
    const bob = await regions.direct["us-east"].query(
      "SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'bob'",
    );
    const other = new pg.Client({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
    });
    await other.connect();
    try {
      await other.query("SET statement_timeout = 300");
      expect(await sqlState(other.query("UPDATE orders SET status = status WHERE tenant_id = 'bob'"))).toBe(
        "57014",
      );
    } finally {
      await other.end();
      await client.query("ROLLBACK");
    }
    expect(await locksHeld("orders", "ExclusiveLock")).toEqual(everywhere(0));
    expect(bob.rows[0].n).toBeGreaterThan(0);
  });

  it("gets PostgreSQL's own 25P01 outside a block and locks nothing", async () => {
    const error = (await client.query("LOCK TABLE orders").catch((e: unknown) => e)) as {
      code?: string;
      message?: string;
    };
    expect([error.code, error.message]).toEqual([
      "25P01",
      "LOCK TABLE can only be used in transaction blocks",
    ]);
    expect(await locksHeld("orders", "AccessExclusiveLock")).toEqual(everywhere(0));
  });

  it("locks a pinned table in its own region only", async () => {
    await client.query("BEGIN");
    await client.query("LOCK TABLE eu_audit IN SHARE MODE");
    const held = await locksHeld("eu_audit", "ShareLock");
    await client.query("COMMIT");
    expect(held).toEqual({ ...everywhere(0), "eu-west": 1 });
  });
});

describe("REFRESH MATERIALIZED VIEW", () => {
  it("refreshes every region's copy, so the view counts every region's new rows", async () => {
    // One new order for a key of each region, written through the proxy.
    await client.query(`INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status, created_at)
      VALUES ('alice', 900, 1, 1, 'EUR', 1, 'open', now()), ('bob', 900, 1, 1, 'USD', 1, 'open', now()),
             ('chandra', 900, 1, 1, 'INR', 1, 'open', now())`);
    expect((await client.query("REFRESH MATERIALIZED VIEW order_counts")).command).toBe("REFRESH");
    const counted = await client.query("SELECT sum(n)::int AS n FROM order_counts");
    const orders = await client.query("SELECT count(*)::int AS n FROM orders");
    expect(counted.rows).toEqual(orders.rows);
    for (const region of REGIONS) {
      const direct = regions.direct[region];
      const view = await direct.query("SELECT coalesce(sum(n), 0)::int AS n FROM order_counts");
      const table = await direct.query("SELECT count(*)::int AS n FROM orders");
      expect(view.rows).toEqual(table.rows);
    }
  });
});
