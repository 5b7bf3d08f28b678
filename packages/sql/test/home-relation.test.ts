import { beforeAll, describe, expect, it } from "vitest";
import { deparse } from "../src/deparse.js";
import { travelsAsText, unnestRelation } from "../src/home-relation.js";
import { Analyzer } from "../src/index.js";
import { KEYS } from "./summarize.js";

beforeAll(async () => {
  await Analyzer.create({ keyColumns: KEYS });
});

function relationSql(columns: { name: string; type: string }[]): string {
  return deparse({
    SelectStmt: {
      targetList: [{ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }] } } } }],
      fromClause: [unnestRelation(columns, 1, "r")],
      limitOption: "LIMIT_OPTION_DEFAULT",
      op: "SETOP_NONE",
    },
  } as never);
}

describe("the home relation over shipped columns", () => {
  it("binds built-in scalars in binary arrays of their own type, typmod included", () => {
    for (const type of [
      "integer",
      "bigint",
      "numeric(12,2)",
      "character varying(4)",
      "character(3)",
      "bpchar",
      "bit(3)",
      "pg_catalog.bit",
      "bit varying(5)",
      "timestamp(0) without time zone",
      "interval day to second(2)",
      "uuid",
    ])
      expect(travelsAsText(type), type).toBe(false);
    expect(relationSql([{ name: "b", type: "bit(3)" }])).toBe(
      "SELECT * FROM unnest(CAST($1 AS pg_catalog.bit(3)[])) AS r(b)",
    );
    // A bit without a length is pg_catalog.bit (any length), never bit (length 1).
    expect(relationSql([{ name: "b", type: "pg_catalog.bit" }])).toBe(
      "SELECT * FROM unnest(CAST($1 AS pg_catalog.bit[])) AS r(b)",
    );
  });

  it("casts every other type back from text to its exact name: no composite is expanded, no array flattened", () => {
    for (const type of [
      '"char"',
      "pg_catalog._char",
      "users",
      "pair[]",
      "mood",
      "int4range",
      "text[]",
      "bit(3)[]",
    ])
      expect(travelsAsText(type), type).toBe(true);
    expect(
      relationSql([
        { name: "t", type: "users" },
        { name: "c", type: '"char"' },
        { name: "cs", type: "pg_catalog._char" },
        { name: "bits", type: "bit(3)[]" },
        { name: "n", type: "integer" },
      ]),
    ).toBe(
      'SELECT * FROM ( SELECT CAST(__geo_u.t AS users) AS t, CAST(__geo_u.c AS "char") AS c, CAST(__geo_u.cs AS pg_catalog._char) AS cs, CAST(__geo_u.bits AS pg_catalog.bit(3)[]) AS bits, __geo_u.n FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[]), CAST($5 AS int[])) AS __geo_u(t, c, cs, bits, n) ) AS r',
    );
  });
});
