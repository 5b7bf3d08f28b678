import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// A login's search_path is not always the planner's assumed `"$user", public` with no schema of
// the role's name: here the servers' role (postgres) has a schema of its own, which PostgreSQL
// searches ahead of public for every connection that sets no search_path.
let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions(
    '\n[[tables]]\ntable = "postgres.widgets"\nplacement = "pinned"\nregion = "us-east"\n',
  );
  for (const [region, client] of Object.entries(regions.direct)) {
    await client.query(`CREATE SCHEMA postgres; CREATE TABLE postgres.orders (id int);
      INSERT INTO postgres.orders VALUES (1); CREATE TABLE postgres.widgets (id int, name text)`);
    if (region === "us-east")
      await client.query("INSERT INTO postgres.widgets VALUES (1, 'cog'), (2, 'gear')");
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

describe("the search_path a login starts with", () => {
  it("resolves an unqualified name to the schema named after the role, as the server does", async () => {
    const client = await session();
    try {
      // Planned as public.orders, every region's orders would be counted: PostgreSQL reads postgres.orders.
      const refusal = await client.query("SELECT count(*)::int AS n FROM orders").then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(refusal).toContain("postgres.orders");
      // A configured table of that schema is routed as itself.
      const widgets = await client.query("SELECT id, name FROM widgets ORDER BY id");
      expect(widgets.rows).toEqual([
        { id: 1, name: "cog" },
        { id: 2, name: "gear" },
      ]);
    } finally {
      await client.end();
    }
  });

  it("goes back to public's tables once the client sets a search_path without the role's schema", async () => {
    const client = await session();
    try {
      await client.query("SET search_path = public");
      const rows = await client.query("SELECT count(*)::int AS n FROM orders");
      const expected = await regions.reference.query("SELECT count(*)::int AS n FROM orders");
      expect(rows.rows).toEqual(expected.rows);
      // RESET returns to the login's starting search_path, and its resolution with it.
      await client.query("RESET search_path");
      const refusal = await client.query("SELECT count(*)::int AS n FROM orders").then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(refusal).toContain("postgres.orders");
    } finally {
      await client.end();
    }
  });
});
