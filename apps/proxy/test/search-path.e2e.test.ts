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

  it("refuses a name the search_path finds first in another configured schema", async () => {
    const client = await session();
    try {
      await client.query("SET search_path = app, public");
      expect(await sqlState(client.query("SELECT * FROM widgets"))).toBe("0A000");
      // The extended protocol, and after a startup-style set_config, alike.
      expect(
        await sqlState(client.query({ text: "SELECT * FROM widgets WHERE $1::int = 1", values: [1] })),
      ).toBe("0A000");
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
