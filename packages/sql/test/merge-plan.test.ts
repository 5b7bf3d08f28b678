import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type MergePlan } from "../src/index.js";
import { parseStatements } from "../src/parser.js";
import { KEYS } from "./summarize.js";

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: KEYS, aggregates: new Set(["my_median"]) });
});

function plan(sql: string): MergePlan {
  return analyzer.analyze(sql).merge;
}

function parses(sql: string): boolean {
  return parseStatements(sql).length === 1;
}

describe("the merge plan", () => {
  it("concatenates rows and asks each region for count + offset rows", () => {
    const p = plan("SELECT name FROM users LIMIT 5 OFFSET 3");
    expect(p).toMatchObject({
      tier: "concat",
      regionSql: "SELECT name FROM users LIMIT 8",
      movesRowData: false,
    });
    expect(p.tier === "concat" && p.limit).toEqual({
      count: { kind: "constant", value: 5 },
      offset: { kind: "constant", value: 3 },
    });
  });

  it("adds bound LIMIT and OFFSET parameters for the regions, keeping PostgreSQL's errors and no overflow", () => {
    const p = plan("SELECT name FROM users WHERE tenant_id = ANY($1) LIMIT $2 OFFSET $3");
    expect(p).toMatchObject({
      tier: "concat",
      regionSql:
        "SELECT name FROM users WHERE tenant_id = ANY ($1) LIMIT CASE WHEN $2 < 0 THEN $2 WHEN $2 > (9223372036854775807 - GREATEST($3, 0)) THEN NULL ELSE $2 + GREATEST($3, 0) END OFFSET LEAST($3, 0)",
    });
  });

  it("leaves a negative constant LIMIT or OFFSET for the regions to refuse", () => {
    expect(plan("SELECT name FROM users LIMIT 5 OFFSET -1")).toMatchObject({
      tier: "concat",
      regionSql: "SELECT name FROM users LIMIT 5 OFFSET -1",
    });
  });

  it("carries ORDER BY keys in hidden trailing columns named __geo_sort_<i>", () => {
    const p = plan(
      "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY created_at DESC LIMIT 20",
    );
    if (p.tier !== "ordered") throw new Error(`expected ordered, got ${p.tier}`);
    expect(p.regionSql).toBe(
      "SELECT *, created_at AS __geo_sort_0 FROM users WHERE tenant_id IN ('alice', 'bob') ORDER BY created_at DESC LIMIT 20",
    );
    expect(p.sortKeys).toEqual([{ column: "__geo_sort_0", fromEnd: 0, descending: true, nullsFirst: true }]);
    expect(p.hiddenColumns).toBe(1);
    expect(p.limit).toEqual({ count: { kind: "constant", value: 20 }, offset: undefined });
  });

  it("resolves ordinals and output names in ORDER BY, and keeps NULLS and COLLATE", () => {
    const p = plan(
      'SELECT id, name AS n FROM users ORDER BY 1 NULLS FIRST, name COLLATE "C" DESC NULLS LAST',
    );
    if (p.tier !== "ordered") throw new Error(p.tier);
    expect(p.regionSql).toBe(
      'SELECT id, name AS n, id AS __geo_sort_0, name COLLATE "C" AS __geo_sort_1 FROM users ORDER BY 1 NULLS FIRST, name COLLATE "C" DESC NULLS LAST',
    );
    expect(p.sortKeys.map((k) => [k.fromEnd, k.descending, k.nullsFirst])).toEqual([
      [1, false, true],
      [0, true, false],
    ]);
    const q = plan('SELECT id FROM users ORDER BY name COLLATE "C"');
    expect(q.tier === "ordered" && q.sortKeys[0]?.collation).toBe("C");
  });

  it("does not merge by a key whose COLLATE sits inside it, which the shipped column would not carry", () => {
    for (const sql of [
      'SELECT upper(name COLLATE "C") FROM users ORDER BY 1',
      `SELECT (SELECT max(o.tenant_id COLLATE "C") FROM orders o WHERE o.tenant_id = u.tenant_id) FROM users u ORDER BY 1`,
      "SELECT id FROM users ORDER BY (name COLLATE \"C\") || 'x' LIMIT 3",
    ]) {
      expect(plan(sql).tier, sql).not.toBe("ordered");
    }
  });

  it("finishes an ordered read in the home region over typed arrays when the proxy cannot compare", () => {
    const p = plan("SELECT id, name FROM users ORDER BY name LIMIT 10 OFFSET $1");
    if (p.tier !== "ordered") throw new Error(p.tier);
    const finish = p.homeFinish.render(["integer", "text", "text"], ["id", "name"]);
    expect(finish).toBe(
      "SELECT c0 AS id, c1 AS name FROM unnest(CAST($2 AS int[]), CAST($3 AS text[]), CAST($4 AS text[])) AS __geo_r(c0, c1, __geo_sort_0) ORDER BY __geo_sort_0 ASC NULLS LAST LIMIT 10 OFFSET $1",
    );
    expect(p.homeFinish.firstParam).toBe(2);
    expect(parses(finish)).toBe(true);
  });

  it("splits aggregates into per-region partials and a home finish with PostgreSQL's own arithmetic", () => {
    const p = plan(
      "SELECT country, count(*), avg(age) FROM users GROUP BY country HAVING count(*) > 100 ORDER BY country",
    );
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    expect(p.regionSql).toBe(
      "SELECT country AS __geo_g0, count(*) AS __geo_p0, sum(age) AS __geo_p1, count(age) AS __geo_p2, sum(CASE WHEN pg_typeof(age) = CAST('real' AS regtype) THEN age * 1::float8 END) AS __geo_p3, count(*) AS __geo_p4 FROM users GROUP BY country",
    );
    expect(p.homeFinish.columns).toEqual([
      "__geo_g0",
      "__geo_p0",
      "__geo_p1",
      "__geo_p2",
      "__geo_p3",
      "__geo_p4",
    ]);
    const finish = p.homeFinish.render(["text", "bigint", "bigint", "bigint", "double precision", "bigint"]);
    expect(finish).toBe(
      "SELECT __geo_g0 AS country, CAST(COALESCE(sum(__geo_p0), 0) AS int8) AS count, sum(__geo_p1) / (NULLIF (sum(__geo_p2), 0)) AS avg FROM unnest(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS bigint[]), CAST($4 AS bigint[]), CAST($5 AS double precision[]), CAST($6 AS bigint[])) AS __geo_p(__geo_g0, __geo_p0, __geo_p1, __geo_p2, __geo_p3, __geo_p4) GROUP BY __geo_g0 HAVING CAST(COALESCE(sum(__geo_p4), 0) AS int8) > 100 ORDER BY __geo_g0",
    );
    expect(parses(finish)).toBe(true);
  });

  it("casts a sum of partial sums back to the partial's type, and averages floats in float8", () => {
    const p = plan("SELECT sum(n), avg(f) FROM orders");
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    const finish = p.homeFinish.render(["bigint", "double precision", "bigint", "double precision"]);
    expect(finish).toContain("CAST(sum(__geo_p0) AS bigint) AS sum");
    expect(finish).toContain("sum(__geo_p1::float8) / CAST(NULLIF (sum(__geo_p2), 0) AS float8) AS avg");
  });

  it("averages real values from their double-precision sums, not their real sums", () => {
    const p = plan("SELECT avg(r) FROM orders");
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    expect(p.regionSql).toBe(
      "SELECT sum(r) AS __geo_p0, count(r) AS __geo_p1, sum(CASE WHEN pg_typeof(r) = CAST('real' AS regtype) THEN r * 1::float8 END) AS __geo_p2 FROM orders",
    );
    const finish = p.homeFinish.render(["real", "bigint", "double precision"]);
    expect(finish).toContain("sum(__geo_p2) / CAST(NULLIF (sum(__geo_p1), 0) AS float8) AS avg");
  });

  it("finishes an aggregate hidden inside a CASE arm", () => {
    const p = plan("SELECT CASE WHEN count(*) > 10 THEN 'many' ELSE 'few' END FROM users");
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    expect(p.regionSql).toBe("SELECT count(*) AS __geo_p0 FROM users");
    expect(p.homeFinish.render(["bigint"])).toContain(
      "CASE WHEN CAST(COALESCE(sum(__geo_p0), 0) AS int8) > 10",
    );
  });

  it("ships each group's distinct values for DISTINCT aggregates, which moves row data", () => {
    const p = plan("SELECT country, count(DISTINCT age), count(*) FROM users GROUP BY country");
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    expect(p.regionSql).toBe(
      "SELECT country AS __geo_g0, age AS __geo_d0, count(*) AS __geo_p0 FROM users GROUP BY country, age",
    );
    expect(p.homeFinish.render(["text", "integer", "bigint"])).toContain("count(DISTINCT __geo_d0) AS count");
    expect(p.movesRowData).toBe(true);
  });

  it("keeps the statement's parameters and numbers the arrays after them", () => {
    const p = plan(
      "SELECT country, count(*) FROM users WHERE age > $1 GROUP BY country HAVING count(*) > $2",
    );
    if (p.tier !== "partial-aggregate") throw new Error(p.tier);
    expect(p.regionSql).toContain("WHERE age > $1");
    const finish = p.homeFinish.render(["text", "bigint", "bigint"]);
    expect(finish).toContain("unnest(CAST($3 AS text[]), CAST($4 AS bigint[]), CAST($5 AS bigint[]))");
    expect(finish).toContain("> $2");
  });

  it("gathers rows for what partials cannot rebuild, with each table's own filters pushed down", () => {
    const p = plan(
      "SELECT u.name, string_agg(o.note, ',') FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE u.age > 30 AND o.total > $1 GROUP BY u.name",
    );
    if (p.tier !== "gather") throw new Error(p.tier);
    expect(p.reason).toBe("the aggregate string_agg()");
    expect(p.sources.map((s) => [s.regionSql, s.columns])).toEqual([
      ["SELECT u.tenant_id, u.age, u.name FROM users AS u WHERE u.age > 30", ["tenant_id", "age", "name"]],
      [
        "SELECT o.tenant_id, o.total, o.note FROM orders AS o WHERE o.total > $1",
        ["tenant_id", "total", "note"],
      ],
    ]);
    const home = p.render([
      {
        table: 0,
        columns: [
          { name: "tenant_id", type: "text" },
          { name: "age", type: "integer" },
          { name: "name", type: "text" },
        ],
      },
      {
        table: 1,
        columns: [
          { name: "tenant_id", type: "text" },
          { name: "total", type: "numeric" },
          { name: "note", type: "text" },
        ],
      },
    ]);
    expect(home).toBe(
      "SELECT u.name, string_agg(o.note, ',') FROM unnest(CAST($2 AS text[]), CAST($3 AS int[]), CAST($4 AS text[])) AS u(tenant_id, age, name) JOIN unnest(CAST($5 AS text[]), CAST($6 AS numeric[]), CAST($7 AS text[])) AS o(tenant_id, total, note) ON o.tenant_id = u.tenant_id WHERE u.age > 30 AND o.total > $1 GROUP BY u.name",
    );
    expect(p.movesRowData).toBe(true);
  });

  it("ships only a row marker for a table whose columns are not read", () => {
    const p = analyzer.analyze("SELECT count(*) FROM users u JOIN orders o ON o.buyer = u.id").gather;
    if (p.tier !== "gather") throw new Error(p.tier);
    expect(p.sources.map((s) => s.regionSql)).toEqual([
      "SELECT u.id FROM users AS u",
      "SELECT o.buyer FROM orders AS o",
    ]);
    const q = analyzer.analyze("SELECT count(*) FROM users, orders").gather;
    expect(q.tier === "gather" && q.sources[0]?.regionSql).toBe("SELECT true AS __geo_row FROM users");
  });

  it("leaves unshipped (replicated) tables in place and casts array columns back from text", () => {
    const p = analyzer.analyze("SELECT * FROM users u JOIN currencies c ON c.code = u.currency").gather;
    if (p.tier !== "gather") throw new Error(p.tier);
    const home = p.render([
      {
        table: 0,
        columns: [
          { name: "currency", type: "text" },
          { name: "tags", type: "text[]" },
        ],
      },
    ]);
    expect(home).toBe(
      "SELECT * FROM ( SELECT __geo_u.currency, CAST(__geo_u.tags AS text[]) AS tags FROM unnest(CAST($1 AS text[]), CAST($2 AS text[])) AS __geo_u(currency, tags) ) AS u JOIN currencies AS c ON c.code = u.currency",
    );
  });

  it("refuses what no tier answers exactly, with 0A000 and a hint naming the fix", () => {
    for (const sql of [
      "SELECT * FROM users FOR UPDATE",
      "SELECT nextval('s') FROM users",
      "SELECT * FROM users LIMIT (random() * 10)::int",
      "WITH w AS (DELETE FROM users RETURNING *) SELECT * FROM w",
      "SELECT * INTO t FROM users",
      "EXPLAIN SELECT * FROM users",
      "INSERT INTO users (tenant_id) VALUES ('a'), ('b')",
    ]) {
      const p = plan(sql);
      if (p.tier !== "refused") throw new Error(`${sql}: ${p.tier}`);
      expect(p.sqlstate).toBe("0A000");
      expect(p.reason.length).toBeGreaterThan(10);
      expect(p.hint).toMatch(/constrain|application|split|one region|separate|existing table/);
    }
  });

  it("produces region statements that PostgreSQL's parser accepts", () => {
    for (const sql of [
      "SELECT DISTINCT country FROM users ORDER BY country",
      "SELECT bool_and(a), every(b), min(c), max(d) FROM users GROUP BY e HAVING bool_or(f)",
      "SELECT * FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id) ORDER BY u.id LIMIT 3",
      "WITH x AS (SELECT * FROM users) SELECT count(*) FROM x",
    ]) {
      const p = plan(sql);
      if (p.tier === "refused" || p.tier === "gather") throw new Error(`${sql}: ${p.tier}`);
      expect(parses(p.regionSql)).toBe(true);
    }
  });
});
