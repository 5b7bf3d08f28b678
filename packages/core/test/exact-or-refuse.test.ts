import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { MemoryDirectory, type Plan, parseConfig, plan, schemaInfoFor, Topology } from "../src/index.js";
import { exampleDirectory, exampleTopology } from "./support/examples.js";

/**
 * Statements whose per-region answers, concatenated, would differ from one server's: the planner
 * must send them to one region, gather their rows home, or refuse; never scatter them as they are.
 */

const ALL = "ap-south,eu-west,us-east";

function summary(decided: Plan): string {
  switch (decided.kind) {
    case "single":
      return `one ${decided.region}`;
    case "scatter":
      return `${decided.merge.tier} ${decided.regions.join(",")}`;
    case "refused":
      return `refused ${decided.refusal.sqlstate}`;
    default:
      return decided.kind;
  }
}

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ ...schemaInfoFor(exampleTopology), cacheSize: 0 });
});

const ROWS: [sql: string, expected: string][] = [
  // 1. Replicated rows, VALUES and functions on the preserved side of an outer join.
  [
    "SELECT c.code, count(o.id) FROM currencies c LEFT JOIN orders o ON o.currency = c.code GROUP BY c.code",
    `gather ${ALL}`,
  ],
  ["SELECT c.code, o.id FROM currencies c LEFT JOIN orders o ON o.tenant_id = c.code", `gather ${ALL}`],
  ["SELECT * FROM orders o RIGHT JOIN currencies c ON c.code = o.currency", `gather ${ALL}`],
  [
    "SELECT g, count(o.id) FROM generate_series(1, 3) g LEFT JOIN orders o ON o.qty = g GROUP BY g",
    `gather ${ALL}`,
  ],
  // ... unless the partitioned side is in one region.
  [
    "SELECT c.code, count(o.id) FROM currencies c LEFT JOIN orders o ON o.currency = c.code AND o.tenant_id = 'bob' GROUP BY c.code",
    "one us-east",
  ],
  // ... and with the partitioned rows preserved, pushed.
  ["SELECT * FROM orders o LEFT JOIN currencies c ON c.code = o.currency", `concat ${ALL}`],
  // 1. Shared rows feeding a sub-query over partitioned rows, and no FROM at all.
  ["SELECT exists(SELECT 1 FROM orders WHERE total > 100)", `gather ${ALL}`],
  [
    "SELECT * FROM (VALUES ('alice'), ('zed')) v(k) WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = v.k)",
    `gather ${ALL}`,
  ],
  [
    "SELECT c.code, (SELECT count(*) FROM orders o WHERE o.currency = c.code) FROM currencies c",
    `gather ${ALL}`,
  ],
  ["SELECT exists(SELECT 1 FROM orders WHERE tenant_id = 'hiro')", "one ap-south"],
  ["SELECT tenant_id FROM users UNION ALL VALUES ('x')", `gather ${ALL}`],
  // A strict-residency table is never shipped: refused instead.
  ["SELECT exists(SELECT 1 FROM vault WHERE secret IS NOT NULL)", "refused 0A000"],
  // 2. Recursive WITH over partitioned rows.
  [
    "WITH RECURSIVE t AS (SELECT id, parent FROM orders WHERE id = 1 UNION ALL SELECT o.id, o.parent FROM orders o JOIN t ON o.parent = t.id) SELECT * FROM t",
    `gather ${ALL}`,
  ],
  [
    "WITH RECURSIVE t AS (SELECT id, parent FROM orders WHERE tenant_id = 'bob' UNION ALL SELECT o.id, o.parent FROM orders o JOIN t ON o.parent = t.id WHERE o.tenant_id = 'bob') SELECT * FROM t",
    "one us-east",
  ],
  // 3. WITH TIES: finished at home over each region's top rows with their ties.
  ["SELECT * FROM orders ORDER BY total FETCH FIRST 3 ROWS WITH TIES", `partial-aggregate ${ALL}`],
  ["SELECT * FROM orders ORDER BY total OFFSET 2 FETCH FIRST $1 ROWS WITH TIES", `partial-aggregate ${ALL}`],
];

describe("exact or refuse, through the analyser and the planner", () => {
  it.each(ROWS)("%s -> %s", (sql, expected) => {
    const decided = plan(analyzer.analyze(sql), { topology: exampleTopology, directory: exampleDirectory });
    expect(summary(decided)).toBe(expected);
  });
});

const INTEGER_TOML = `
[routing]
key_type = "integer"

[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu" }

[[topology.regions]]
id = "us-east"
primary = { host = "us" }

[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "id"
`;

describe("two spellings of one integer key", () => {
  const topology = Topology.fromConfig(parseConfig(INTEGER_TOML));
  const directory = new MemoryDirectory([
    ["5", "us-east"],
    ["6", "eu-west"],
  ]);
  let integers: Analyzer;

  beforeAll(async () => {
    integers = await Analyzer.create({ ...schemaInfoFor(topology), cacheSize: 0 });
  });

  const rows: [string, string][] = [
    ["SELECT * FROM accounts WHERE id = 5 AND id = 5.0", "one us-east"],
    ["SELECT * FROM accounts WHERE id = '05' AND id = 5", "one us-east"],
    ["SELECT * FROM accounts WHERE id = 5 AND id = '5'::int8", "one us-east"],
    ["SELECT * FROM accounts WHERE id IN ('05', 6.0)", "concat eu-west,us-east"],
    ["SELECT * FROM accounts WHERE id = '5'::float8", "concat eu-west,us-east"],
    ["SELECT * FROM accounts WHERE id = 5 AND id = 6", "one eu-west"],
  ];

  it.each(rows)("%s -> %s", (sql, expected) => {
    expect(summary(plan(integers.analyze(sql), { topology, directory }))).toBe(expected);
  });
});
