import { beforeAll, describe, expect, it } from "vitest";
import { initSql, insertColumnCount, insertWithColumns } from "../src/index.js";

beforeAll(initSql);

describe("insertColumnCount", () => {
  it("counts a VALUES row or a source query's outputs, and nothing it cannot read", () => {
    expect(insertColumnCount("INSERT INTO users VALUES ('bob', 7, 'x'), ('al', 8, 'y')")).toBe(3);
    expect(insertColumnCount("INSERT INTO users SELECT 'bob', 7 FROM t")).toBe(2);
    expect(insertColumnCount("INSERT INTO users (tenant_id) VALUES ('bob')")).toBeUndefined();
    expect(insertColumnCount("INSERT INTO users DEFAULT VALUES")).toBeUndefined();
    expect(insertColumnCount("INSERT INTO users SELECT * FROM t")).toBeUndefined();
    expect(insertColumnCount("INSERT INTO users SELECT t.* FROM t")).toBeUndefined();
    expect(insertColumnCount("INSERT INTO users SELECT 1 UNION SELECT 2")).toBeUndefined();
    expect(insertColumnCount("SELECT 1")).toBeUndefined();
  });
});

describe("insertWithColumns", () => {
  it("writes the column list PostgreSQL would use, keeping everything else", () => {
    expect(
      insertWithColumns("INSERT INTO users VALUES ('bob', 7) ON CONFLICT DO NOTHING RETURNING *", [
        "tenant_id",
        "Id",
      ]),
    ).toBe(`INSERT INTO users (tenant_id, "Id") VALUES ('bob', 7) ON CONFLICT DO NOTHING RETURNING *`);
  });
});
