import { beforeAll, describe, expect, it } from "vitest";
import { initSql, qualifyTables, unqualifiedTables } from "../src/index.js";

beforeAll(initSql);

const toApp = (name: string): string | undefined => (name === "widgets" ? undefined : "app");

describe("unqualifiedTables", () => {
  it("lists each table named without a schema once, never a CTE", () => {
    expect(
      unqualifiedTables("SELECT * FROM orders o JOIN users u ON u.id = o.buyer JOIN orders p ON true"),
    ).toEqual(["orders", "users"]);
    expect(
      unqualifiedTables("WITH recent AS (SELECT * FROM orders) SELECT * FROM recent, public.users"),
    ).toEqual(["orders"]);
    expect(unqualifiedTables("SELECT 1")).toEqual([]);
  });
});

describe("qualifyTables", () => {
  it("puts the schema in front of each unqualified name, keeping comments, hints and spelling", () => {
    expect(qualifyTables("/* geo: key=alice */ SELECT o.id FROM orders o WHERE o.x = 'é'", toApp)).toBe(
      `/* geo: key=alice */ SELECT o.id FROM "app".orders o WHERE o.x = 'é'`,
    );
    expect(qualifyTables(`SELECT "Orders".id FROM "Orders"`, toApp)).toBe(
      `SELECT "Orders".id FROM "app"."Orders"`,
    );
    expect(qualifyTables("SELECT * FROM ONLY orders, widgets, public.users", toApp)).toBe(
      `SELECT * FROM ONLY "app".orders, widgets, public.users`,
    );
  });

  it("reads byte locations of non-ASCII text as string offsets", () => {
    expect(qualifyTables("SELECT 'ünïcödé' AS a, b FROM orders JOIN users USING (id)", toApp)).toBe(
      `SELECT 'ünïcödé' AS a, b FROM "app".orders JOIN "app".users USING (id)`,
    );
  });

  it("qualifies every place a table is named: writes, sub-queries, COPY, MERGE", () => {
    expect(qualifyTables("INSERT INTO orders (id) SELECT id FROM users RETURNING orders.id", toApp)).toBe(
      `INSERT INTO "app".orders (id) SELECT id FROM "app".users RETURNING orders.id`,
    );
    expect(qualifyTables("UPDATE orders SET x = (SELECT max(y) FROM users) WHERE id = 1", toApp)).toBe(
      `UPDATE "app".orders SET x = (SELECT max(y) FROM "app".users) WHERE id = 1`,
    );
    expect(qualifyTables("DELETE FROM orders USING users WHERE EXISTS (SELECT 1 FROM users)", toApp)).toBe(
      `DELETE FROM "app".orders USING "app".users WHERE EXISTS (SELECT 1 FROM "app".users)`,
    );
    expect(qualifyTables("COPY orders (id) TO STDOUT", toApp)).toBe(`COPY "app".orders (id) TO STDOUT`);
    expect(
      qualifyTables("MERGE INTO orders t USING users s ON t.id = s.id WHEN MATCHED THEN DELETE", toApp),
    ).toBe(`MERGE INTO "app".orders t USING "app".users s ON t.id = s.id WHEN MATCHED THEN DELETE`);
  });

  it("leaves a CTE's name alone where it names the CTE, and qualifies the table its body reads", () => {
    expect(qualifyTables("WITH orders AS (SELECT * FROM orders) SELECT * FROM orders", toApp)).toBe(
      `WITH orders AS (SELECT * FROM "app".orders) SELECT * FROM orders`,
    );
  });

  it("quotes a schema name that needs it", () => {
    expect(qualifyTables("SELECT * FROM orders", () => 'My "Schema"')).toBe(
      `SELECT * FROM "My ""Schema""".orders`,
    );
  });
});
