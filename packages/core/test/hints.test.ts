import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { type Plan, plan, schemaInfoFor } from "../src/index.js";
import { exampleDirectory, exampleTopology } from "./support/examples.js";

// alice lives in eu-west, bob in us-east; eu_audit is pinned to eu-west; currencies is everywhere.

function summary(decided: Plan): string {
  switch (decided.kind) {
    case "single":
      return `one ${decided.region}`;
    case "refused":
      return `refused ${decided.refusal.sqlstate} ${decided.refusal.code}`;
    case "scatter":
    case "distributed-write":
      return `${decided.kind} ${decided.regions.join(",")}`;
    default:
      return decided.kind;
  }
}

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ ...schemaInfoFor(exampleTopology), cacheSize: 0 });
});

const ROWS: [sql: string, expected: string][] = [
  // Reads and DDL go where the hint says: an operator's deliberate look at one region.
  ["/* geo: region=us-east */ SELECT count(*) FROM orders", "one us-east"],
  ["/* geo: region=us-east */ SELECT * FROM eu_audit", "one us-east"],
  ["/* geo: region=ap-south */ CREATE INDEX ON orders (total)", "one ap-south"],
  // A write goes only where its rows live anyway.
  [
    "/* geo: region=eu-west */ INSERT INTO eu_audit (tenant_id, action, at) VALUES ('alice', 'x', now())",
    "one eu-west",
  ],
  [
    "/* geo: region=us-east */ INSERT INTO eu_audit (tenant_id, action, at) VALUES ('alice', 'x', now())",
    "refused 0A000 hint-writes-elsewhere",
  ],
  ["/* geo: region=us-east */ UPDATE orders SET total = 1 WHERE tenant_id = 'bob'", "one us-east"],
  [
    "/* geo: region=us-east */ UPDATE orders SET total = 1 WHERE tenant_id = 'alice'",
    "refused 0A000 hint-writes-elsewhere",
  ],
  ["/* geo: region=us-east */ DELETE FROM orders", "refused 0A000 hint-writes-elsewhere"],
  // A table the configuration does not place (a temporary one) is where the hint says.
  ["/* geo: region=eu-west */ INSERT INTO scratch VALUES (1)", "one eu-west"],
  // ... reading, as any hinted read does, the hinted region's rows.
  ["/* geo: region=eu-west */ INSERT INTO scratch SELECT id FROM orders", "one eu-west"],
  [
    "/* geo: region=us-east */ UPDATE currencies SET digits = 2 WHERE code = 'EUR'",
    "refused 0A000 hint-writes-elsewhere",
  ],
  // A key hint may not contradict the key a write names.
  [
    "/* geo: key=alice */ INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status) VALUES ('bob', 9, 1, 1, 'EUR', 1, 'open')",
    "refused 0A000 hint-writes-elsewhere",
  ],
  [
    "/* geo: key=bob */ INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status) VALUES ('bob', 9, 1, 1, 'EUR', 1, 'open')",
    "one us-east",
  ],
  [
    "/* geo: key=alice */ UPDATE orders SET total = 1 WHERE tenant_id = 'bob'",
    "refused 0A000 hint-writes-elsewhere",
  ],
  // ... and says where a write whose key it cannot see goes.
  ["/* geo: key=bob */ UPDATE orders SET total = total + 1", "one us-east"],
  ["/* geo: key=alice */ SELECT * FROM orders WHERE tenant_id = 'bob'", "one eu-west"],
];

describe("hints on writes", () => {
  it.each(ROWS)("%s -> %s", (sql, expected) => {
    const decided = plan(analyzer.analyze(sql), { topology: exampleTopology, directory: exampleDirectory });
    expect(summary(decided)).toBe(expected);
  });
});
