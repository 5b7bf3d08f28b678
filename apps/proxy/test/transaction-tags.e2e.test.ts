import { encodeBind, encodeExecute, encodeParse, encodeQuery, encodeSync } from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { type SideBySide, sideBySide } from "./support/side-by-side.js";

/**
 * The proxy answers transaction control itself (it owns the block), so each command tag it
 * sends is its own: compared here, message for message, with the same statements sent straight
 * to PostgreSQL, in the simple and in the extended protocol.
 */

let region: OneRegion;
let both: SideBySide;

beforeAll(async () => {
  region = await startOneRegion();
  both = await sideBySide(region.direct, region.proxy.port);
});

afterAll(async () => {
  await both?.close();
  await region?.close();
});

const STRINGS = [
  "START TRANSACTION; END",
  "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT 1; ABORT",
  "BEGIN; START TRANSACTION; COMMIT",
  "START TRANSACTION; SAVEPOINT a; RELEASE a; COMMIT AND CHAIN; ROLLBACK",
  "BEGIN WORK; END TRANSACTION",
  "END",
  "ABORT",
];

describe("transaction control command tags", () => {
  it.each(STRINGS)("match PostgreSQL's for the simple Query %j", async (sql) => {
    const [direct, proxied] = await both.both(encodeQuery({ sql }));
    expect(proxied).toEqual(direct);
  });

  it.each(["START TRANSACTION", "START TRANSACTION READ WRITE", "BEGIN"])(
    "match PostgreSQL's for %j then END in one extended batch",
    async (sql) => {
      const statement = (text: string): Buffer[] => [
        encodeParse({ name: "", sql: text, paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
      ];
      const batch = Buffer.concat([
        ...statement(sql),
        ...statement("SELECT 1"),
        ...statement("END"),
        encodeSync(),
      ]);
      const [direct, proxied] = await both.both(batch);
      expect(proxied).toEqual(direct);
      expect(proxied.filter((line) => line.startsWith("CommandComplete"))[0]).toBe(
        `CommandComplete ${sql.startsWith("START") ? "START TRANSACTION" : "BEGIN"}`,
      );
    },
  );
});
