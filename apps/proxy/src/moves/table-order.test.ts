import { describe, expect, it } from "vitest";
import { orderTables } from "./table-order.js";

const tables = [
  { table: "orders", key: "tenant_id" },
  { table: "items", key: "tenant_id" },
  { table: "users", key: "tenant_id" },
];

describe("orderTables", () => {
  it("puts parents before children, following foreign keys through several levels", () => {
    const order = orderTables(tables, [
      { child: "orders", parent: "users", outside: "false" },
      { child: "items", parent: "orders", outside: "false" },
    ]);
    expect(order.tables.map((table) => table.table)).toEqual(["users", "orders", "items"]);
    expect(order.outside).toBeUndefined();
  });

  it("names a table outside the move that references one inside it", () => {
    const order = orderTables(tables, [{ child: "reviews", parent: "users", outside: "true" }]);
    expect(order.outside).toEqual({ child: "reviews", parent: "users" });
  });

  it("keeps configuration order for tables caught in a cycle rather than looping", () => {
    const order = orderTables(tables.slice(0, 2), [
      { child: "orders", parent: "items", outside: "false" },
      { child: "items", parent: "orders", outside: "false" },
    ]);
    expect(order.tables.map((table) => table.table)).toEqual(["orders", "items"]);
  });
});
