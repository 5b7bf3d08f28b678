import { beforeAll, describe, expect, it } from "vitest";
import { nodeAs } from "../src/ast.js";
import {
  cteRule,
  type Distribution,
  type DistributionRule,
  distributionOf,
  type JoinKind,
  joinRule,
  outputRule,
  setOperationRule,
  subQueryRule,
} from "../src/distribution.js";
import { Analyzer, initSql } from "../src/index.js";
import { parseOne } from "../src/parser.js";
import { StatementWalker } from "../src/statement-walker.js";

const P: Distribution = "partitioned";
const E: Distribution = "everywhere";
const U: Distribution = "unknown";

describe("the join rule", () => {
  const rows: [JoinKind, Distribution, Distribution, Distribution | DistributionRule][] = [
    ["inner", P, P, P],
    ["inner", P, E, P],
    ["inner", E, P, P],
    ["inner", E, E, E],
    ["inner", U, P, U],
    ["left", P, E, P],
    ["left", P, P, P],
    ["left", E, E, E],
    ["left", E, P, "outer-join-preserves-everywhere"],
    ["left", E, U, U],
    ["right", P, E, "outer-join-preserves-everywhere"],
    ["right", E, P, P],
    ["right", P, P, P],
    ["full", E, P, "outer-join-preserves-everywhere"],
    ["full", P, E, "outer-join-preserves-everywhere"],
    ["full", P, P, P],
    ["full", E, E, E],
  ];
  it.each(rows)("%s join of %s and %s gives %s", (kind, left, right, expected) => {
    expect(joinRule(left, right, kind)).toBe(expected);
  });
});

describe("the sub-query rule", () => {
  const rows: [Distribution, Distribution, Distribution | DistributionRule][] = [
    [P, P, P],
    [P, E, P],
    [P, U, P],
    [E, E, E],
    [E, P, "sub-query-beside-everywhere"],
    [E, U, "sub-query-beside-everywhere"],
    [U, E, U],
  ];
  it.each(rows)("rows %s with a sub-query over %s give %s", (outer, inner, expected) => {
    expect(subQueryRule(outer, inner)).toBe(expected);
  });
});

describe("the set-operation rule", () => {
  const rows: [Distribution, Distribution, Distribution | DistributionRule][] = [
    [P, P, P],
    [E, E, E],
    [P, E, "set-operation-mixes-everywhere"],
    [E, P, "set-operation-mixes-everywhere"],
    [U, P, U],
  ];
  it.each(rows)("%s with %s gives %s", (left, right, expected) => {
    expect(setOperationRule(left, right)).toBe(expected);
  });
});

describe("the WITH rule", () => {
  const rows: [Distribution, boolean, Distribution | DistributionRule][] = [
    [P, false, P],
    [E, false, E],
    [E, true, E],
    [P, true, "recursive-cte-over-partitioned"],
    [U, true, "recursive-cte-over-partitioned"],
  ];
  it.each(rows)("a body of %s (recursive: %s) gives %s", (body, recursive, expected) => {
    expect(cteRule(body, recursive)).toBe(expected);
  });
});

describe("the output rule", () => {
  const rows: [Distribution, boolean, Distribution | DistributionRule][] = [
    [P, true, P],
    [E, false, E],
    [E, true, "everywhere-output"],
  ];
  it.each(rows)("output %s (reads partitioned rows: %s) gives %s", (top, reads, expected) => {
    expect(outputRule(top, reads)).toBe(expected);
  });
});

const KEYS = new Map([
  ["users", "tenant_id"],
  ["orders", "tenant_id"],
]);

/** A statement, the first failed rule (or `pushed`), and the tier its merge plan takes. */
type Row = [sql: string, rule: DistributionRule | "pushed", tier?: string];

const STATEMENTS: Row[] = [
  // Partitioned rows, with or without shared rows joined to them: pushed.
  ["SELECT * FROM orders", "pushed", "concat"],
  ["SELECT * FROM orders o JOIN currencies c ON c.code = o.currency", "pushed", "concat"],
  ["SELECT * FROM orders o LEFT JOIN currencies c ON c.code = o.currency", "pushed", "concat"],
  ["SELECT * FROM currencies c RIGHT JOIN orders o ON c.code = o.currency", "pushed", "concat"],
  ["SELECT * FROM users u LEFT JOIN orders o ON o.tenant_id = u.tenant_id", "pushed", "concat"],
  ["SELECT * FROM users u FULL JOIN orders o ON o.tenant_id = u.tenant_id", "pushed", "concat"],
  ["SELECT * FROM orders o, unnest(o.tags) t", "pushed", "concat"],
  ["SELECT * FROM orders o LEFT JOIN LATERAL unnest(o.tags) t ON true", "pushed", "concat"],
  ["SELECT * FROM orders o CROSS JOIN (VALUES (1), (2)) v(x)", "pushed", "concat"],
  ["SELECT * FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id)", "pushed"],
  ["SELECT * FROM users u WHERE u.country IN (SELECT code FROM currencies)", "pushed", "concat"],
  ["SELECT count(*) FROM orders o JOIN currencies c ON c.code = o.currency", "pushed", "partial-aggregate"],
  ["SELECT tenant_id FROM users UNION ALL SELECT tenant_id FROM orders", "pushed", "concat"],
  [
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t JOIN orders o ON o.qty = t.n",
    "pushed",
    "concat",
  ],
  ["WITH o AS (SELECT * FROM orders) SELECT * FROM o", "pushed", "concat"],
  ["SELECT * FROM currencies c, LATERAL (SELECT * FROM orders o WHERE o.currency = c.code) x", "pushed"],
  // 1. Shared rows on the preserved side of an outer join.
  [
    "SELECT c.code, count(o.id) FROM currencies c LEFT JOIN orders o ON o.currency = c.code GROUP BY c.code",
    "outer-join-preserves-everywhere",
    "gather",
  ],
  [
    "SELECT c.code, o.id FROM currencies c LEFT JOIN orders o ON o.tenant_id = c.code",
    "outer-join-preserves-everywhere",
    "gather",
  ],
  [
    "SELECT * FROM orders o RIGHT JOIN currencies c ON c.code = o.currency",
    "outer-join-preserves-everywhere",
  ],
  ["SELECT * FROM currencies c FULL JOIN orders o ON c.code = o.currency", "outer-join-preserves-everywhere"],
  [
    "SELECT v.k, u.name FROM (VALUES ('alice'), ('zed')) v(k) LEFT JOIN users u ON u.tenant_id = v.k",
    "outer-join-preserves-everywhere",
    "gather",
  ],
  [
    "SELECT g, count(o.id) FROM generate_series(1, 3) g LEFT JOIN orders o ON o.qty = g GROUP BY g",
    "outer-join-preserves-everywhere",
    "gather",
  ],
  [
    "SELECT * FROM (SELECT * FROM currencies) c LEFT JOIN orders o ON o.currency = c.code",
    "outer-join-preserves-everywhere",
  ],
  [
    "WITH c AS (SELECT code FROM currencies) SELECT * FROM c LEFT JOIN orders o ON o.currency = c.code",
    "outer-join-preserves-everywhere",
  ],
  [
    "SELECT * FROM currencies c LEFT JOIN LATERAL (SELECT * FROM orders o WHERE o.currency = c.code) x ON true",
    "outer-join-preserves-everywhere",
  ],
  // 1. Shared rows feeding a sub-query over partitioned rows; no FROM at all.
  ["SELECT exists(SELECT 1 FROM orders WHERE total > 100)", "sub-query-beside-everywhere", "gather"],
  ["SELECT NOT EXISTS (SELECT 1 FROM orders WHERE total > 100) AS none", "sub-query-beside-everywhere"],
  ["SELECT 1 WHERE EXISTS (SELECT 1 FROM users)", "sub-query-beside-everywhere"],
  [
    "SELECT * FROM (VALUES ('alice'), ('zed')) v(k) WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = v.k)",
    "sub-query-beside-everywhere",
    "gather",
  ],
  [
    "SELECT * FROM (VALUES ('alice'), ('zed')) v(k) WHERE EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = v.k)",
    "sub-query-beside-everywhere",
    "gather",
  ],
  [
    "SELECT c.code, (SELECT count(*) FROM orders o WHERE o.currency = c.code) FROM currencies c",
    "sub-query-beside-everywhere",
    "gather",
  ],
  ["SELECT * FROM currencies WHERE code IN (SELECT currency FROM orders)", "sub-query-beside-everywhere"],
  [
    "SELECT g, (SELECT max(o.total) FROM orders o WHERE o.qty = g) FROM generate_series(1, 3) g",
    "sub-query-beside-everywhere",
    "gather",
  ],
  ["SELECT * FROM unnest(ARRAY(SELECT id FROM orders)) i", "function-over-partitioned"],
  // UNION ALL of shared and partitioned rows.
  ["SELECT tenant_id FROM users UNION ALL VALUES ('x')", "set-operation-mixes-everywhere", "gather"],
  ["SELECT 'x' UNION ALL SELECT tenant_id FROM users", "set-operation-mixes-everywhere", "gather"],
  ["SELECT code FROM currencies UNION ALL SELECT tenant_id FROM users", "set-operation-mixes-everywhere"],
  // 2. Recursive WITH over partitioned rows.
  [
    "WITH RECURSIVE t AS (SELECT id, parent FROM orders WHERE id = 1 UNION ALL SELECT o.id, o.parent FROM orders o JOIN t ON o.parent = t.id) SELECT * FROM t",
    "recursive-cte-over-partitioned",
    "gather",
  ],
  [
    "WITH RECURSIVE t AS (SELECT tenant_id, id FROM orders WHERE id = 1 UNION ALL SELECT o.tenant_id, o.id FROM orders o JOIN t ON o.tenant_id = t.tenant_id AND o.parent = t.id) SELECT count(*) FROM t",
    "recursive-cte-over-partitioned",
    "gather",
  ],
  // Shared output beside unread partitioned rows.
  ["WITH o AS (SELECT * FROM orders) SELECT * FROM currencies", "everywhere-output"],
  // A WITH query over partitioned rows read twice: each region would pair only its own rows.
  [
    "WITH q AS (SELECT tenant_id, currency FROM orders) SELECT count(*) FROM q a JOIN q b ON a.currency = b.currency",
    "cte-read-twice",
    "gather",
  ],
  ["WITH q AS (SELECT * FROM orders) SELECT * FROM q WHERE qty > (SELECT avg(qty) FROM q)", "cte-read-twice"],
  ["WITH q AS (SELECT code FROM currencies) SELECT * FROM q a JOIN q b ON a.code = b.code", "pushed"],
];

let analyzer: Analyzer;

beforeAll(async () => {
  await initSql();
  analyzer = await Analyzer.create({ keyColumns: KEYS, cacheSize: 0 });
});

describe("statements and their first failed rule", () => {
  it.each(STATEMENTS)("%s: %s", (sql, rule, tier) => {
    const select = nodeAs(parseOne(sql), "SelectStmt");
    if (select === undefined) throw new Error("not a SELECT");
    const walk = new StatementWalker({ keyColumns: KEYS }).walkTop({ SelectStmt: select });
    const verdict = distributionOf(select, walk);
    expect(verdict.violations[0]?.rule ?? "pushed").toBe(rule);
    const merge = analyzer.analyze(sql).merge;
    if (tier !== undefined) expect(merge.tier).toBe(tier);
    if (rule !== "pushed") expect(merge.tier === "gather" || merge.tier === "refused").toBe(true);
  });

  it("refuses with the rule's reason and hint when the rows cannot be gathered", () => {
    const merge = analyzer.analyze(
      "SELECT * FROM currencies c LEFT JOIN users u TABLESAMPLE SYSTEM (10) ON u.country = c.code",
    ).merge;
    expect(merge).toMatchObject({
      tier: "refused",
      sqlstate: "0A000",
      reason: expect.stringContaining("outer join"),
      hint: expect.stringContaining("constrain the geo-partitioned side to one key"),
    });
  });
});
