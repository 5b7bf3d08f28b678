import { encodeBind, encodeDescribe, encodeExecute, encodeParse, encodeQuery, encodeSync } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { referencePair, rowsSorted } from "./support/reference-pair.js";

// A bound write across regions is described where it will run: inside the session's block, on the
// block's connections, so it sees what the block did (a column it added, a table it locked).
const world = referencePair();

const query = (sql: string): Buffer => encodeQuery({ sql });

/** Parse, Bind, Describe portal, Execute and Sync, as drivers send one statement. */
function bound(sql: string, params: string[]): Buffer {
  return Buffer.concat([
    encodeParse({ name: "", sql, paramTypes: [] }),
    encodeBind({
      portal: "",
      statement: "",
      paramFormats: [],
      params: params.map((p) => Buffer.from(p)),
      resultFormats: [],
    }),
    encodeDescribe({ target: "P", name: "" }),
    encodeExecute({ portal: "", maxRows: 0 }),
    encodeSync(),
  ]);
}

async function same(bytes: Buffer): Promise<string[]> {
  const [expected, got] = await world.pair.both(bytes);
  expect(rowsSorted(got)).toEqual(rowsSorted(expected));
  return got;
}

const INSERT_TWO_REGIONS = `INSERT INTO orders (tenant_id, id, user_id, currency, total, note)
  VALUES ('alice', 900, 1, 'EUR', $1, 'a'), ('bob', 900, 1, 'USD', $1, 'b') RETURNING tenant_id, note`;

describe("a bound write across regions, described inside a block", () => {
  it("sees a column the block added (and waits on no lock the block holds)", async () => {
    await same(query("BEGIN; ALTER TABLE orders ADD COLUMN note text"));
    const got = await same(bound(INSERT_TWO_REGIONS, ["12.50"]));
    expect(got).toContain('DataRow ["bob","b"]');
    expect(got.at(-1)).toBe("ReadyForQuery T");
    await same(query("ROLLBACK"));
  });

  it("fails the block when the statement is invalid there, as PostgreSQL does", async () => {
    await same(query("BEGIN"));
    // A statement that runs in several regions is checked by the server at Bind (docs/proxy.md):
    // the same error, one or two messages later than PostgreSQL's at Parse.
    const [expected, got] = await world.pair.both(bound(INSERT_TWO_REGIONS, ["12.50"]));
    expect(expected).toEqual(["ErrorResponse 42703", "ReadyForQuery E"]);
    expect(got.filter((line) => line !== "ParseComplete" && line !== "BindComplete")).toEqual(expected);
    await same(query("ROLLBACK"));
    await same(query("SELECT count(*) FROM orders WHERE id = 900"));
  });

  it("outside a block the write still commits in both regions", async () => {
    const sql = `INSERT INTO orders (tenant_id, id, user_id, currency, total)
      VALUES ('alice', 901, 1, 'EUR', $1), ('bob', 901, 1, 'USD', $1) RETURNING tenant_id, total`;
    await same(bound(sql, ["3.25"]));
    await same(query("SELECT tenant_id, total FROM orders WHERE id = 901 ORDER BY 1"));
    await same(query("DELETE FROM orders WHERE id = 901"));
  });
});
