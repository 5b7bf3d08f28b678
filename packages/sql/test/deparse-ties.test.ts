import { beforeAll, describe, expect, it } from "vitest";
import { deparse } from "../src/deparse.js";
import { initSql } from "../src/index.js";
import { parseOne } from "../src/parser.js";

/** Every SelectStmt's LIMIT option, in tree order. */
function limitOptions(tree: unknown): string[] {
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const child = record[key] as Record<string, unknown>;
      if (key === "SelectStmt" || key === "larg" || key === "rarg")
        out.push(String(child?.["limitOption"] ?? "none"));
      visit(child);
    }
  };
  visit(tree);
  return out;
}

const STATEMENTS = [
  "SELECT * FROM users ORDER BY age FETCH FIRST 3 ROWS WITH TIES",
  "SELECT * FROM users ORDER BY age OFFSET 2 ROWS FETCH FIRST 3 ROWS WITH TIES",
  "SELECT * FROM users ORDER BY age OFFSET $2 FETCH FIRST $1 ROWS WITH TIES",
  "SELECT * FROM (SELECT * FROM users ORDER BY age FETCH FIRST 1 ROW WITH TIES) s WHERE s.age > 1",
  "SELECT * FROM users WHERE id IN (SELECT id FROM orders ORDER BY total DESC FETCH FIRST 5 ROWS WITH TIES)",
  "(SELECT a FROM t ORDER BY a FETCH FIRST 2 ROWS WITH TIES) UNION ALL (SELECT b FROM u ORDER BY b FETCH FIRST 1 ROW WITH TIES)",
  "SELECT * FROM users ORDER BY age FETCH FIRST 3 ROWS WITH TIES FOR UPDATE",
  "SELECT * FROM users ORDER BY age LIMIT 3",
];

beforeAll(async () => {
  await initSql();
});

describe("the printer keeps WITH TIES", () => {
  it.each(STATEMENTS)("%s", (sql) => {
    const tree = parseOne(sql);
    const printed = deparse(tree as never);
    expect(limitOptions(parseOne(printed))).toEqual(limitOptions(tree));
    expect(deparse(parseOne(printed) as never)).toBe(printed);
  });
});
