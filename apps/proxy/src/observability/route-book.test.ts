import { PgError, SqlState } from "@geo/proto";
import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { exampleContext } from "../console/example-context.js";
import { type Route, Router } from "../routing/router.js";
import { RouteBook } from "./route-book.js";
import { statementShape } from "./statement-shape.js";

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
});

const oneRegion = (region: string): Route => ({ kind: "region", region, readOnly: true, anywhere: false });

describe("statementShape", () => {
  it("lifts strings, numbers and dollar-quoted constants out, numbered after the parameters", () => {
    expect(statementShape("SELECT * FROM users WHERE tenant_id = 'o''brien' AND age > 3.5e2", 0)).toBe(
      "SELECT * FROM users WHERE tenant_id = $1 AND age > $2",
    );
    expect(statementShape("select $1, E'a\\'b', $$x$$, $tag$y$tag$", 1)).toBe("select $1, $2, $3, $4");
  });

  it("keeps comments, quoted identifiers, names with digits and collapses whitespace", () => {
    expect(statementShape('/* geo: key=alice */\n  SELECT  "t1".c2   FROM t1 -- 5\nWHERE x=1', 0)).toBe(
      '/* geo: key=alice */ SELECT "t1".c2 FROM t1 -- 5 WHERE x=$1',
    );
  });

  it("cuts a very long statement and says so", () => {
    const shape = statementShape(`SELECT ${"a, ".repeat(500)}b`, 0);
    expect(shape.length).toBeLessThanOrEqual(400);
    expect(shape.endsWith("…")).toBe(true);
  });
});

describe("RouteBook", () => {
  it("keeps one entry per shape with its count and the last decision's regions", () => {
    const book = new RouteBook();
    const a = analyzer.analyze("SELECT name FROM users WHERE tenant_id = 'alice'");
    const b = analyzer.analyze("SELECT name FROM users WHERE tenant_id = 'bob'");
    const c = analyzer.analyze("SELECT name FROM users WHERE tenant_id = 'chandra'");
    book.record(a, oneRegion("eu-west"), "one_region", 1);
    book.record(b, oneRegion("us-east"), "one_region", 2);
    book.record(c, oneRegion("ap-south"), "one_region", 3);
    const decisions = book.decisions();
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      shape: "SELECT name FROM users WHERE tenant_id = $1",
      plan: "one_region",
      regions: ["ap-south"],
      finish: "relayed",
      count: 3,
    });
  });

  it("stays bounded, dropping the shape seen longest ago", () => {
    const book = new RouteBook(3);
    for (let i = 0; i < 5; i++) {
      book.record(
        analyzer.analyze(`SELECT c${i} FROM users WHERE tenant_id = 'x'`),
        oneRegion("eu-west"),
        "one_region",
        i,
      );
    }
    expect(book.decisions().map((d) => d.shape)).toEqual([
      "SELECT c4 FROM users WHERE tenant_id = $1",
      "SELECT c3 FROM users WHERE tenant_id = $1",
      "SELECT c2 FROM users WHERE tenant_id = $1",
    ]);
  });

  it("lists refused shapes most refused first, with reason and SQLSTATE, and keeps the often refused when full", () => {
    const book = new RouteBook(2);
    const refused = (text: string, at: number): void => {
      const route: Route = {
        kind: "error",
        error: new PgError({ code: SqlState.feature_not_supported, message: "no" }),
        refusal: "cross-region-join",
      };
      book.record(analyzer.analyze(text), route, "refused", at);
    };
    refused("SELECT * FROM users u JOIN users v ON u.id = v.id WHERE u.age = 1", 1);
    refused("SELECT * FROM users u JOIN users v ON u.id = v.id WHERE u.age = 2", 2);
    refused("SELECT 1 FROM users u JOIN users v ON u.name = v.name", 3);
    // Full: the least refused shape (refused once) gives way, the one refused twice stays.
    refused("SELECT u.age FROM users u JOIN users v ON u.name = v.name", 4);
    const shapes = book.refusedShapes();
    expect(shapes).toHaveLength(2);
    expect(shapes[0]).toMatchObject({
      shape: "SELECT * FROM users u JOIN users v ON u.id = v.id WHERE u.age = $1",
      reason: "cross-region-join",
      sqlstate: "0A000",
      count: 2,
    });
    expect(shapes[1]?.shape).toBe("SELECT u.age FROM users u JOIN users v ON u.name = v.name");
    expect(book.decisions()).toEqual([]);
  });
});

describe("Router.analysisOf", () => {
  it("finds the analysis of each of the last routes decided, and forgets older ones", async () => {
    const context = await exampleContext();
    const router = new Router(context.analyzer, context.topology, context.directory, undefined);
    const analyses = Array.from({ length: 70 }, (_, i) =>
      context.analyzer.analyze(`SELECT name FROM users WHERE tenant_id = 'k${i}'`),
    );
    const routes = analyses.map((analysis) => router.route(analysis));
    // A simple-query batch reports its routes after all were decided: the last 64 are known.
    for (let i = 6; i < 70; i++) expect(router.analysisOf(routes[i]!)).toBe(analyses[i]);
    for (let i = 0; i < 6; i++) expect(router.analysisOf(routes[i]!)).toBeUndefined();
    expect(router.analysisOf({ kind: "region", region: "eu-west", readOnly: true, anywhere: false })).toBe(
      undefined,
    );
  });
});
