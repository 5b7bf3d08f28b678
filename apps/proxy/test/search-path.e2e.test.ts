import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { sqlState } from "./support/sql-state.js";

// users and orders are configured as public tables; app.widgets as a table of schema app.
let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions(
    '\n[[tables]]\ntable = "app.widgets"\nplacement = "pinned"\nregion = "us-east"\n',
  );
  // app.widgets lives in us-east; shadow.orders is no configured table, with other rows in each region.
  for (const [region, client] of Object.entries(regions.direct)) {
    await client.query(`CREATE SCHEMA app; CREATE TABLE app.widgets (id int, name text);
      CREATE SCHEMA shadow; CREATE TABLE shadow.orders (id int); INSERT INTO shadow.orders VALUES (1)`);
    if (region === "us-east") await client.query("INSERT INTO app.widgets VALUES (1, 'cog'), (2, 'gear')");
  }
});
afterAll(() => regions?.close());

async function session(): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
  return client;
}

describe("unqualified table names under the session's search_path", () => {
  it("routes as before while public is searched ahead of configured schemas", async () => {
    const client = await session();
    try {
      await client.query("SET search_path = public, app");
      const rows = await client.query("SELECT count(*)::int AS n FROM users WHERE tenant_id = 'alice'");
      const expected = await regions.reference.query(
        "SELECT count(*)::int AS n FROM users WHERE tenant_id = 'alice'",
      );
      expect(rows.rows).toEqual(expected.rows);
    } finally {
      await client.end();
    }
  });

  it("answers a name the search_path finds first in another configured schema as that table", async () => {
    const client = await session();
    try {
      await client.query("SET search_path = app, public");
      const widgets = await client.query("SELECT id, name FROM widgets ORDER BY id");
      expect(widgets.rows).toEqual([
        { id: 1, name: "cog" },
        { id: 2, name: "gear" },
      ]);
      // Names the earlier schema does not hold are still public's, joined with it in one statement.
      const joined = await client.query(
        "SELECT count(*)::int AS n FROM widgets w JOIN currencies c ON c.digits = w.id + 1 WHERE w.id = 1",
      );
      expect(joined.rows).toEqual([{ n: 3 }]);
      const rows = await client.query("SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'bob'");
      const expected = await regions.reference.query(
        "SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'bob'",
      );
      expect(rows.rows).toEqual(expected.rows);
      // The extended protocol does not resolve names yet: refused, never misrouted.
      expect(
        await sqlState(client.query({ text: "SELECT * FROM widgets WHERE $1::int = 1", values: [1] })),
      ).toBe("0A000");
    } finally {
      await client.end();
    }
  });

  it("reads an unconfigured table of an earlier schema as the table it is, not as public's", async () => {
    const client = await session();
    try {
      // PostgreSQL reads shadow.orders here; planned as public.orders, every region's row would be summed.
      await client.query("SET search_path = shadow, public");
      const refusal = await client.query("SELECT count(*)::int AS n FROM orders").then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(refusal).toContain("shadow.orders");
      // Through Parse/Bind the name is not resolved: refused with the qualified name as the fix.
      expect(
        await sqlState(client.query({ text: "SELECT count(*) FROM orders WHERE $1::int = 1", values: [1] })),
      ).toBe("0A000");
      // Qualified, public.orders is still the configured table.
      const rows = await client.query("SELECT count(*)::int AS n FROM public.orders WHERE tenant_id = 'bob'");
      const expected = await regions.reference.query(
        "SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'bob'",
      );
      expect(rows.rows).toEqual(expected.rows);
      // Inside a block too, and the block stays usable after the lookup.
      await client.query("BEGIN");
      const widgets = await client.query(
        "SET LOCAL search_path = app, public; SELECT count(*)::int AS n FROM widgets",
      );
      expect((widgets as unknown as pg.QueryResult[])[1]?.rows).toEqual([{ n: 2 }]);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
  });

  it("refuses a configured public table once public is no longer searched", async () => {
    const client = await session();
    try {
      await client.query("SELECT pg_catalog.set_config('search_path', 'app', false)");
      expect(await sqlState(client.query("SELECT count(*) FROM orders"))).toBe("0A000");
      // A qualified name is always the table it names.
      const rows = await client.query("SELECT count(*)::int AS n FROM public.orders WHERE tenant_id = 'bob'");
      const expected = await regions.reference.query(
        "SELECT count(*)::int AS n FROM orders WHERE tenant_id = 'bob'",
      );
      expect(rows.rows).toEqual(expected.rows);
      await client.query("RESET search_path");
      expect(
        await sqlState(client.query("SELECT count(*) FROM orders WHERE tenant_id = 'bob'")),
      ).toBeUndefined();
    } finally {
      await client.end();
    }
  });
});
