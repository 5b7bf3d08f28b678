import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { sqlState } from "./support/sql-state.js";

let regions: RealRegions;
let client: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions();
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await regions?.close();
});

describe("a statement the server refuses at Parse", () => {
  it("fails once, and the connection goes on, when it would read several regions", async () => {
    const sql = "SELECT $1::text AS c FROM users u WHERE u.id = 'x'::text";
    expect(await sqlState(client.query(sql, ["a"]))).toBe("42883");
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    // Named, as drivers that prepare do.
    expect(await sqlState(client.query({ name: "bad_named", text: sql, values: ["a"] }))).toBe("42883");
    expect((await client.query("SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
  });
});

describe("contradictory keys", () => {
  it("answer no rows, as one server would", async () => {
    const sql =
      "SELECT o.total FROM orders o CROSS JOIN users b WHERE b.tenant_id = 'alice' AND b.tenant_id = 'bob'";
    expect((await client.query(sql)).rows).toEqual([]);
    expect((await client.query(sql.replace("'bob'", "$1"), ["bob"])).rows).toEqual([]);
  });
});
