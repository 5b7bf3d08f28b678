import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { sqlState } from "./support/sql-state.js";

let regions: RealRegions;
let client: pg.Client;

const ORDER_COUNT =
  "CREATE FUNCTION order_count() RETURNS bigint LANGUAGE sql STABLE AS 'SELECT count(*) FROM orders'";
const DOUBLE_IT =
  "CREATE FUNCTION double_it(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2'";

beforeAll(async () => {
  regions = await startRealRegions();
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
  await regions.reference.query(`${ORDER_COUNT}; ${DOUBLE_IT}`);
});
afterAll(async () => {
  await client?.end();
  await regions?.close();
});

async function refusal(sql: string): Promise<string | undefined> {
  return client.query(sql).then(
    () => undefined,
    (error: Error & { code?: string }) => `${error.code}: ${error.message}`,
  );
}

describe("functions the database defines, called across regions", () => {
  it("refuses a function that may read tables, which each region would run over its own rows", async () => {
    await client.query(ORDER_COUNT);
    const reason = await refusal("SELECT order_count()");
    expect(reason).toMatch(/^0A000: function order_count is defined in the database/);
    // Also where the key names one region: the function would still see that region's rows only.
    expect(await sqlState(client.query("SELECT order_count() FROM users WHERE tenant_id = 'bob'"))).toBe(
      "0A000",
    );
    expect(await sqlState(client.query({ text: "SELECT order_count() + $1", values: [1] }))).toBe("0A000");
  });

  it("refuses it in a string of several statements too, and reads functions created on the servers directly", async () => {
    expect(await sqlState(client.query("SELECT 1; SELECT order_count()"))).toBe("0A000");
    for (const region of Object.values(regions.direct))
      await region.query(
        "CREATE FUNCTION made_here(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1'",
      );
    const sql = "SELECT count(*)::int AS n FROM orders WHERE made_here(id) > 2";
    await regions.reference.query(
      "CREATE FUNCTION made_here(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1'",
    );
    expect((await client.query(sql)).rows).toEqual((await regions.reference.query(sql)).rows);
  });

  it("runs it in the one region a hint names, as that region answers it", async () => {
    const hinted = await client.query("/* geo: region=us-east */ SELECT order_count()::int AS n");
    const direct = await regions.direct["us-east"].query("SELECT count(*)::int AS n FROM orders");
    expect(hinted.rows).toEqual(direct.rows);
  });

  it("answers with an IMMUTABLE function right after its CREATE through the proxy", async () => {
    await client.query(DOUBLE_IT);
    const sql = "SELECT count(*)::int AS n FROM orders WHERE double_it(id) > 4";
    expect((await client.query(sql)).rows).toEqual((await regions.reference.query(sql)).rows);
    const qualified = "SELECT count(*)::int AS n FROM orders WHERE public.double_it(id) > 4";
    expect((await client.query(qualified)).rows).toEqual((await regions.reference.query(sql)).rows);
  });

  it("refuses it again at once when it is altered to read tables", async () => {
    await client.query("ALTER FUNCTION double_it(bigint) VOLATILE");
    expect(await sqlState(client.query("SELECT count(*) FROM orders WHERE double_it(id) > 4"))).toBe("0A000");
  });

  it("leaves the server's own functions and pg_catalog-qualified calls alone", async () => {
    const sql = "SELECT lower('A') AS l, pg_catalog.upper('b') AS u, count(*)::int AS n FROM orders";
    expect((await client.query(sql)).rows).toEqual((await regions.reference.query(sql)).rows);
  });
});
