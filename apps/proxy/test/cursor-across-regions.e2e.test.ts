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

const ACROSS = "DECLARE c CURSOR FOR SELECT * FROM orders";

describe("DECLARE CURSOR over rows of several regions", () => {
  it("outside a block gets PostgreSQL's own error first, as one server gives it", async () => {
    expect(await sqlState(regions.reference.query(ACROSS))).toBe("25P01");
    expect(await sqlState(client.query(ACROSS))).toBe("25P01");
  });

  it("inside a block, or WITH HOLD, is refused with the reason and the block fails as on a server", async () => {
    await client.query("BEGIN");
    expect(await sqlState(client.query(ACROSS))).toBe("0A000");
    expect(await sqlState(client.query("SELECT 1"))).toBe("25P02");
    await client.query("ROLLBACK");
    expect(await sqlState(client.query("DECLARE h CURSOR WITH HOLD FOR SELECT * FROM orders"))).toBe("0A000");
  });

  it("over one region's rows still runs there", async () => {
    await client.query("BEGIN");
    await client.query("DECLARE k CURSOR FOR SELECT id FROM orders WHERE tenant_id = 'bob' ORDER BY id");
    const fetched = await client.query("FETCH 2 FROM k");
    const expected = await regions.reference.query(
      "SELECT id FROM orders WHERE tenant_id = 'bob' ORDER BY id LIMIT 2",
    );
    expect(fetched.rows).toEqual(expected.rows);
    await client.query("COMMIT");
  });
});
