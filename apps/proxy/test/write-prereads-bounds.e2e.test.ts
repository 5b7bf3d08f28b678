import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// A write's reads of other regions are held in memory and written into the statement, so they are
// bounded by [gather] as a gathered read is: past max_rows the write fails with 53400, writing nothing.
let regions: RealRegions;
let client: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions("\n[gather]\nmax_rows = 4\n");
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

async function codeOf(sql: string): Promise<string | undefined> {
  return client.query(sql).then(
    () => undefined,
    (error: unknown) => (error as { code?: string }).code,
  );
}

describe("reads a write needs first, over [gather] max_rows", () => {
  it("fails the write with 53400 when a read across regions passes the bound, and writes nothing", async () => {
    const before = await regions.reference.query("SELECT count(*)::int AS n FROM orders");
    expect(
      await codeOf(
        "DELETE FROM orders o USING users u WHERE u.id = o.buyer AND u.age > 0 AND o.tenant_id = 'alice'",
      ),
    ).toBe("53400");
    let count = 0;
    for (const region of ["eu-west", "us-east", "ap-south"] as const)
      count += (await regions.direct[region].query("SELECT count(*)::int AS n FROM orders")).rows[0].n;
    expect(count).toBe(before.rows[0].n);
  });

  it("fails it inside a block too, failing the block, and still answers a read within the bound", async () => {
    await client.query("BEGIN");
    expect(
      await codeOf("UPDATE users SET age = 1 WHERE id IN (SELECT buyer FROM orders) AND tenant_id = 'bob'"),
    ).toBe("53400");
    expect(await codeOf("SELECT 1")).toBe("25P02");
    await client.query("ROLLBACK");
    const updated = await client.query(
      "UPDATE users SET age = age WHERE tenant_id = 'bob' AND id IN (SELECT id FROM users WHERE tenant_id = 'alice' AND id < 3)",
    );
    expect(updated.rowCount).toBe(2);
  });
});
