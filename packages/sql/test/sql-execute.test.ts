import { beforeAll, describe, expect, it } from "vitest";
import { bindSqlExecute, initSql, type ParameterType } from "../src/index.js";

beforeAll(initSql);

const catalog = (name: string): ParameterType => ({ schema: "pg_catalog", name });

function bound(text: string, types: ParameterType[], execute: string): string {
  const binding = bindSqlExecute({ text, types }, execute);
  if (binding.kind !== "statement") throw new Error(`not bound: ${JSON.stringify(binding)}`);
  return binding.sql;
}

describe("bindSqlExecute", () => {
  it("writes a quoted argument as a constant of its parameter's qualified type", () => {
    expect(bound("SELECT * FROM users WHERE tenant_id = $1", [catalog("text")], "EXECUTE p('alice')")).toBe(
      `SELECT * FROM users WHERE tenant_id = CAST('alice' AS pg_catalog."text")`,
    );
  });

  it("keeps bit's and character's parameter types without the length their SQL keywords add", () => {
    expect(bound("SELECT $1, $2", [catalog("bit"), catalog("bpchar")], "EXECUTE p('101', 'ab ')")).toBe(
      `SELECT CAST('101' AS pg_catalog."bit") AS "?column?", CAST('ab ' AS pg_catalog.bpchar) AS "?column?"`,
    );
  });

  it("casts numbers and booleans with the function an assignment uses, to numeric and string types only", () => {
    expect(bound("SELECT $1 + 0", [catalog("int4")], "EXECUTE p(5.5)")).toBe("SELECT 5.5::int + 0");
    expect(bound("SELECT $1 || ''", [catalog("text")], "EXECUTE p(-7)")).toBe(
      `SELECT CAST(-7 AS pg_catalog.text) || ''`,
    );
    expect(bound("SELECT NOT $1", [catalog("bool")], "EXECUTE p(false)")).toBe(
      "SELECT NOT (CAST(false AS boolean))",
    );
    expect(bindSqlExecute({ text: "SELECT $1", types: [catalog("bool")] }, "EXECUTE p(1)")).toEqual({
      kind: "argument",
      position: 1,
      type: "pg_catalog.bool",
    });
  });

  it("writes NULL as a NULL of the parameter's type", () => {
    expect(bound("SELECT $1 IS NULL", [catalog("uuid")], "EXECUTE p(NULL)")).toBe(
      `SELECT CAST(NULL AS pg_catalog."uuid") IS NULL`,
    );
  });

  it("takes a literal cast to the parameter's own type as it is, and refuses a cast to another", () => {
    expect(bound("SELECT $1 + 1", [catalog("int4")], "EXECUTE p('5'::integer)")).toBe("SELECT '5'::int + 1");
    expect(bindSqlExecute({ text: "SELECT $1", types: [catalog("int8")] }, "EXECUTE p('5'::int4)").kind).toBe(
      "argument",
    );
  });

  it("refuses an argument that is an expression", () => {
    expect(
      bindSqlExecute({ text: "SELECT $1", types: [catalog("timestamptz")] }, "EXECUTE p(now())"),
    ).toEqual({
      kind: "argument",
      position: 1,
      type: "pg_catalog.timestamptz",
    });
  });

  it("answers PostgreSQL's arity rule: as many arguments as parameters", () => {
    expect(bindSqlExecute({ text: "SELECT $1", types: [catalog("int4")] }, "EXECUTE p(1, 2)")).toEqual({
      kind: "arity",
      expected: 1,
      got: 2,
    });
    expect(bindSqlExecute({ text: "SELECT 1", types: [] }, "EXECUTE p")).toEqual({
      kind: "statement",
      sql: "SELECT 1",
    });
  });

  it("names an output column as PostgreSQL named it from the parameter, in every select list and RETURNING", () => {
    expect(
      bound(
        "SELECT $1, CASE WHEN true THEN $1 END, ($1)::text, (SELECT $1), $1 AS named, x FROM t",
        [catalog("int4")],
        "EXECUTE p(3)",
      ),
    ).toBe(
      `SELECT 3::int AS "?column?", CASE WHEN true THEN 3::int END, CAST(3::int AS text), (SELECT 3::int AS "?column?"), 3::int AS named, x FROM t`,
    );
    expect(bound("INSERT INTO t VALUES ($1) RETURNING $1, a", [catalog("int8")], "EXECUTE p(9)")).toBe(
      `INSERT INTO t VALUES (CAST(9 AS bigint)) RETURNING CAST(9 AS bigint) AS "?column?", a`,
    );
  });
});
