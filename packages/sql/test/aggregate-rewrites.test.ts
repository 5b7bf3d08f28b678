import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type MergePlan } from "../src/index.js";
import { KEYS } from "./summarize.js";

// Shapes the regions' rewrite once got wrong: each is rewritten so PostgreSQL accepts it and
// answers as one server, or gathered.
let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: KEYS, cacheSize: 0 });
});

function plan(sql: string): MergePlan {
  return analyzer.analyze(sql).merge;
}

describe("partial aggregates and DISTINCT", () => {
  it("groups a constant DISTINCT column by its position, not as a constant GROUP BY would read it", () => {
    const p = plan("SELECT DISTINCT 'x' AS c, 5 AS five, status FROM orders");
    expect(p.tier).toBe("partial-aggregate");
    expect(p.tier === "partial-aggregate" && p.regionSql).toBe(
      "SELECT 'x' AS __geo_g0, 5 AS __geo_g1, status AS __geo_g2 FROM orders GROUP BY 1, 2, status",
    );
  });

  it("gathers DISTINCT over an aggregate, which no region can GROUP BY", () => {
    expect(plan("SELECT DISTINCT count(*) FROM users").tier).toBe("gather");
    expect(plan("SELECT DISTINCT string_agg(name, ',' ORDER BY name) FROM users").tier).toBe("gather");
  });

  it("gathers a sub-query used as a grouping key", () => {
    expect(
      plan("SELECT (SELECT count(*) FROM orders o WHERE o.buyer = u.id) AS n FROM users u GROUP BY 1").tier,
    ).toBe("gather");
  });

  it("finishes min/max of an explicitly collated argument in that collation", () => {
    const p = plan('SELECT min(name COLLATE "C") FROM users GROUP BY age');
    expect(p.tier).toBe("partial-aggregate");
    const finish = p.tier === "partial-aggregate" ? p.homeFinish.render(["integer", "text"] as never) : "";
    expect(finish).toContain('min(__geo_p0 COLLATE "C")');
    expect(plan('SELECT max(upper(name COLLATE "C")) FROM users').tier).toBe("gather");
  });
});

describe("gathers", () => {
  it("refuse a sub-query in GROUP BY, which would no longer be the select list's expression", () => {
    const analysis = analyzer.analyze(
      "SELECT (SELECT count(*) FROM orders) AS c FROM generate_series(1, 5) g GROUP BY GROUPING SETS (((SELECT count(*) FROM orders)), ())",
    );
    expect(analysis.gather.tier).toBe("refused");
  });
});

describe("session objects", () => {
  it.each(["CREATE TEMP SEQUENCE s", "CREATE TEMPORARY VIEW v AS SELECT 1", "CREATE TEMP TABLE t (x int)"])(
    "%s pins the session to its connection",
    (sql) => {
      expect(analyzer.analyze(sql).sessionEffects.map((effect) => effect.kind)).toEqual(["create-temp"]);
    },
  );
});

describe("a collated grouping key", () => {
  it("is grouped and ordered at home in its collation", () => {
    const p = plan('SELECT tenant_id COLLATE "C" AS c FROM orders GROUP BY tenant_id COLLATE "C" ORDER BY 1');
    const finish = p.tier === "partial-aggregate" ? p.homeFinish.render(["text"] as never) : "";
    expect(finish).toContain('__geo_g0 COLLATE "C" AS c');
    expect(finish).toContain('GROUP BY __geo_g0 COLLATE "C"');
  });
});

describe("a DISTINCT aggregate of a collated argument", () => {
  it("counts distinct values at home in that collation", () => {
    const p = plan('SELECT count(DISTINCT name COLLATE "und-x-icu") FROM users');
    const finish = p.tier === "partial-aggregate" ? p.homeFinish.render(["text"] as never) : "";
    expect(finish).toContain('count(DISTINCT __geo_d0 COLLATE "und-x-icu")');
  });
});
