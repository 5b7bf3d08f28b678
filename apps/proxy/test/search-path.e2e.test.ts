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
      CREATE SCHEMA shadow; CREATE TABLE shadow.orders (id int); INSERT INTO shadow.orders VALUES (1);
      CREATE TABLE shadow.widgets (id int)`);
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
      // Through Parse/Bind too, the name is resolved (at each Bind).
      const bound = await client.query({
        text: "SELECT id, name FROM widgets WHERE id >= $1 ORDER BY id",
        values: [1],
      });
      expect(bound.rows).toEqual(widgets.rows);
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
      // Through Parse/Bind alike: shadow.orders is a table with no placement.
      const bound = await client
        .query({ text: "SELECT count(*) FROM orders WHERE $1::int = 1", values: [1] })
        .then(
          () => undefined,
          (error: Error) => error.message,
        );
      expect(bound).toContain("shadow.orders");
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

  it("resolves a prepared statement's names again at each execution, as PostgreSQL re-parses it", async () => {
    const client = await session();
    const count = {
      name: "widget_count",
      text: "SELECT count(*)::int AS n FROM widgets WHERE $1::int = 1",
      values: [1],
    };
    try {
      await client.query("SET search_path = app, public");
      expect((await client.query(count)).rows).toEqual([{ n: 2 }]);
      // Now shadow.widgets comes first: PostgreSQL would read it, so the proxy plans it, and
      // refuses it as the table with no placement it is.
      await client.query("SET search_path = shadow, app, public");
      const refusal = await client.query(count).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(refusal).toContain("shadow.widgets");
      await client.query("SET search_path = app, public");
      expect((await client.query(count)).rows).toEqual([{ n: 2 }]);
    } finally {
      await client.end();
    }
  });

  it("resolves names inside a block under its SET LOCAL, and a temporary table ahead of every schema", async () => {
    const client = await session();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL search_path = app, public");
      const inBlock = await client.query({
        text: "SELECT count(*)::int AS n FROM widgets WHERE $1::int = 1",
        values: [1],
      });
      expect(inBlock.rows).toEqual([{ n: 2 }]);
      // The block goes on after the lookup ran between its messages.
      const more = await client.query({ text: "SELECT name FROM widgets WHERE id = $1", values: [2] });
      expect(more.rows).toEqual([{ name: "gear" }]);
      await client.query("COMMIT");
      // A temporary table comes before every schema, public's configured orders too: PostgreSQL
      // reads the temporary one, on the connection the session is pinned to.
      await client.query("/* geo: region=us-east */ CREATE TEMP TABLE orders (id int)");
      await client.query("/* geo: region=us-east */ INSERT INTO orders VALUES (7), (8), (9)");
      for (const query of [
        "SELECT count(*)::int AS n FROM orders",
        { text: "SELECT count(*)::int AS n FROM orders WHERE $1::int = 1", values: [1] },
      ]) {
        expect((await client.query(query)).rows).toEqual([{ n: 3 }]);
      }
      // Joined with a table of every region it cannot be placed: refused, never half-read.
      const joined = await client.query("SELECT count(*) FROM orders o JOIN users u ON u.id = o.id").then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(joined).toContain("orders");
      expect(joined).not.toBe("answered");
      // Qualified, public's orders is still the configured table.
      const rows = await client.query("SELECT count(*)::int AS n FROM public.orders");
      const expected = await regions.reference.query("SELECT count(*)::int AS n FROM orders");
      expect(rows.rows).toEqual(expected.rows);
    } finally {
      await client.end();
    }
  });

  it("follows SET LOCAL and set_config(..., true) of search_path for the rest of the block, savepoints too", async () => {
    const client = await session();
    const refusalOf = (query: Promise<unknown>) =>
      query.then(
        () => "answered",
        (error: Error) => error.message,
      );
    try {
      // In each case PostgreSQL reads shadow.orders: planned as public.orders it would sum every region's.
      const cases = [
        ["BEGIN", "SET LOCAL search_path = shadow, public"],
        ["BEGIN", "SELECT pg_catalog.set_config('search_path', 'shadow, public', true)"],
        [
          "BEGIN",
          "SET LOCAL search_path = shadow, public",
          "SAVEPOINT s",
          "SET LOCAL search_path = public",
          "ROLLBACK TO SAVEPOINT s",
        ],
      ];
      for (const statements of cases) {
        for (const statement of statements) await client.query(statement);
        expect(await refusalOf(client.query("SELECT count(*) FROM orders"))).toContain("shadow.orders");
        await client.query("ROLLBACK");
        for (const statement of statements) await client.query(statement);
        expect(
          await refusalOf(
            client.query({ text: "SELECT count(*) FROM orders WHERE $1::int = 1", values: [1] }),
          ),
        ).toContain("shadow.orders");
        await client.query("ROLLBACK");
      }
      // A block's SET LOCAL ends with it.
      await client.query("BEGIN");
      await client.query("SET LOCAL search_path = shadow, public");
      await client.query("COMMIT");
      const rows = await client.query("SELECT count(*)::int AS n FROM orders");
      const expected = await regions.reference.query("SELECT count(*)::int AS n FROM orders");
      expect(rows.rows).toEqual(expected.rows);
      // In one string, the statements after the SET are read under it.
      for (const text of [
        "SET LOCAL search_path = shadow, public; SELECT count(*) FROM orders",
        "BEGIN; SET LOCAL search_path = shadow, public; SELECT count(*) FROM orders; COMMIT",
        "SET search_path = shadow, public; SELECT count(*) FROM orders",
      ]) {
        expect(await refusalOf(client.query(text))).toContain("shadow.orders");
        await client.query("ROLLBACK").catch(() => undefined);
        await client.query("RESET search_path");
      }
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
