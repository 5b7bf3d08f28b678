import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, SqlAnalysisError } from "../src/index.js";
import { errorCases } from "./cases/errors.js";
import { hintsAndParameters } from "./cases/hints-and-parameters.js";
import { insertsAndWrites } from "./cases/inserts-and-writes.js";
import { keyLattice } from "./cases/key-lattice.js";
import { keyTies } from "./cases/key-ties.js";
import { kindsAndPrimary } from "./cases/kinds-and-primary.js";
import { maintenance } from "./cases/maintenance.js";
import { mergeTiers } from "./cases/merge-tiers.js";
import { seedStatements } from "./cases/seed-statements.js";
import { sessionEffects } from "./cases/session-effects.js";
import { tablesAndBlocks } from "./cases/tables-and-blocks.js";
import { transactions } from "./cases/transactions.js";
import { AGGREGATES, type Case, KEYS, type Summary, summarize } from "./summarize.js";

const topics: ReadonlyArray<readonly [string, readonly Case[]]> = [
  ["the specification's statements", seedStatements],
  ["kinds and the primary", kindsAndPrimary],
  ["transaction control", transactions],
  ["session effects", sessionEffects],
  ["tables and query blocks", tablesAndBlocks],
  ["the key lattice", keyLattice],
  ["key ties", keyTies],
  ["inserts and writes", insertsAndWrites],
  ["hints and parameters", hintsAndParameters],
  ["merge tiers", mergeTiers],
  ["maintenance commands", maintenance],
];

let analyzer: Analyzer;
let cached: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: KEYS, aggregates: AGGREGATES, cacheSize: 0 });
  cached = await Analyzer.create({ keyColumns: KEYS, aggregates: AGGREGATES });
});

function pick(summary: Summary, expected: Partial<Summary>): Partial<Summary> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) out[key] = summary[key as keyof Summary];
  return out;
}

describe("the statement table", () => {
  it("holds at least 250 statements", () => {
    const total = topics.reduce((n, [, cases]) => n + cases.length, 0) + errorCases.length;
    expect(total).toBeGreaterThanOrEqual(250);
  });

  for (const [topic, cases] of topics) {
    describe(topic, () => {
      it.each(cases.map((c) => [c.sql, c] as const))("analyses %j as expected", (_sql, c) => {
        const summary = summarize(analyzer.analyze(c.sql));
        expect(pick(summary, c.expect)).toEqual(c.expect);
      });
    });
  }

  describe("statements that cannot be analysed", () => {
    it.each(errorCases.map((c) => [c.sql, c] as const))("refuses %j with its SQLSTATE", (_sql, c) => {
      let thrown: unknown;
      try {
        analyzer.analyze(c.sql);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SqlAnalysisError);
      const error = thrown as SqlAnalysisError;
      expect({ sqlstate: error.sqlstate, code: error.code }).toEqual({ sqlstate: c.sqlstate, code: c.code });
      if (c.position !== undefined) expect(error.position).toBe(c.position);
      if (c.code === "unreadable-hint") expect(error.hint).toContain("geo: key=");
    });
  });

  it("gives the same analysis through the cache, twice, as cold", () => {
    for (const [, cases] of topics) {
      for (const c of cases) {
        const cold = summarize(analyzer.analyze(c.sql));
        expect(summarize(cached.analyze(c.sql))).toEqual(cold);
        expect(summarize(cached.analyze(c.sql))).toEqual(cold);
      }
    }
    expect(cached.stats().hits).toBeGreaterThan(0);
  });
});

describe("maintenance commands", () => {
  it("keep the name CREATE INDEX CONCURRENTLY gives its index, for the message that says how to resume", () => {
    expect(analyzer.analyze("CREATE INDEX CONCURRENTLY users_name ON users (name)").maintenance?.index).toBe(
      "users_name",
    );
    expect(analyzer.analyze("CREATE INDEX CONCURRENTLY ON users (name)").maintenance?.index).toBeUndefined();
  });
});
