import { beforeAll, describe, expect, it } from "vitest";
import { initSql, tableChanges } from "../src/index.js";

beforeAll(initSql);

describe("tableChanges", () => {
  it.each([
    ["ALTER TABLE orders RENAME TO orders_old", [["orders", "rename", undefined]]],
    ["ALTER TABLE app.orders SET SCHEMA archive", [["orders", "set-schema", undefined]]],
    ["ALTER TABLE orders RENAME COLUMN tenant_id TO t", [["orders", "rename-column", "tenant_id"]]],
    [
      "ALTER TABLE orders DROP COLUMN tenant_id, DROP COLUMN note",
      [
        ["orders", "drop-column", "tenant_id"],
        ["orders", "drop-column", "note"],
      ],
    ],
    [
      "ALTER TABLE orders ALTER COLUMN tenant_id TYPE varchar(40)",
      [["orders", "retype-column", "tenant_id"]],
    ],
  ])("reads %s", (text, expected) => {
    expect(tableChanges(text).map((c) => [c.table, c.kind, c.column])).toEqual(expected);
  });

  it.each([
    "ALTER TABLE orders ADD COLUMN note text",
    "ALTER INDEX orders_pkey RENAME TO orders_key",
    "ALTER SEQUENCE s RENAME TO t",
    "CREATE TABLE t (a int)",
    "DROP TABLE orders",
  ])("finds no such change in %s", (text) => {
    expect(tableChanges(text)).toEqual([]);
  });
});
