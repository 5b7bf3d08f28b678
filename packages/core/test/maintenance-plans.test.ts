import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import {
  explain,
  loadConfig,
  MemoryDirectory,
  type Plan,
  plan,
  schemaInfoFor,
  Topology,
} from "../src/index.js";
import { exampleDirectory, examples, exampleTopology } from "./support/examples.js";

const topology = exampleTopology;
const directory = exampleDirectory;
let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create(schemaInfoFor(topology));
});

const ALL = ["ap-south", "eu-west", "us-east"];

/** The parts of a plan these rows check: its kind, its regions and whether a block refuses it. */
function shapeOf(decided: Plan): { kind: string; regions: readonly string[]; outsideBlock?: boolean } {
  switch (decided.kind) {
    case "single":
      return { kind: "single", regions: [decided.region] };
    case "each-region":
      return { kind: "each-region", regions: decided.regions, outsideBlock: decided.outsideBlock };
    case "scatter":
    case "distributed-write":
      return { kind: decided.kind, regions: decided.regions };
    default:
      return { kind: decided.kind, regions: [] };
  }
}

type Row = [sql: string, kind: string, regions: readonly string[], outsideBlock?: boolean];

// users and orders are geo-partitioned over three regions; currencies and fx_rates are replicated
// (fx_rates written at us-east); eu_audit is pinned to eu-west, the home region.
const ROWS: Row[] = [
  ["VACUUM users", "each-region", ALL, true],
  ["VACUUM (VERBOSE, ANALYZE) users", "each-region", ALL, true],
  ["VACUUM currencies", "each-region", ALL, true],
  // Every copy of a replicated table is a table of its own, whichever region writes it.
  ["VACUUM fx_rates", "each-region", ALL, true],
  ["VACUUM eu_audit", "single", ["eu-west"]],
  ["VACUUM eu_audit, users", "each-region", ALL, true],
  ["VACUUM", "each-region", ALL, true],
  ["VACUUM pg_catalog.pg_class", "each-region", ALL, true],
  ["ANALYZE users", "each-region", ALL, false],
  ["ANALYZE orders (total)", "each-region", ALL, false],
  ["ANALYZE eu_audit", "single", ["eu-west"]],
  ["ANALYZE", "each-region", ALL, false],
  ["CHECKPOINT", "each-region", ALL, false],
  ["REINDEX TABLE users", "each-region", ALL, false],
  ["REINDEX TABLE CONCURRENTLY users", "each-region", ALL, true],
  ["REINDEX TABLE eu_audit", "single", ["eu-west"]],
  ["REINDEX INDEX users_pkey", "each-region", ALL, false],
  ["REINDEX INDEX CONCURRENTLY users_pkey", "each-region", ALL, true],
  ["REINDEX DATABASE", "each-region", ALL, true],
  ["REINDEX SYSTEM", "each-region", ALL, true],
  ["REINDEX SCHEMA public", "each-region", ALL, true],
  ["CLUSTER users USING users_pkey", "each-region", ALL, false],
  ["CLUSTER users", "each-region", ALL, false],
  ["CLUSTER eu_audit", "single", ["eu-west"]],
  ["CLUSTER", "each-region", ALL, true],
  ["CREATE INDEX CONCURRENTLY users_name ON users (name)", "each-region", ALL, true],
  ["CREATE INDEX CONCURRENTLY ON currencies (code)", "each-region", ALL, true],
  ["CREATE INDEX CONCURRENTLY ON eu_audit (at)", "single", ["eu-west"]],
  ["DROP INDEX CONCURRENTLY users_name", "each-region", ALL, true],
  ["DROP INDEX CONCURRENTLY IF EXISTS users_name", "each-region", ALL, true],
  // Steered: a region hint runs it there alone; a key hint in the key's region.
  ["/* geo: region=us-east */ VACUUM users", "single", ["us-east"]],
  ["/* geo: region=ap-south */ DROP INDEX CONCURRENTLY users_name", "single", ["ap-south"]],
  ["/* geo: key=bob */ VACUUM users", "single", ["us-east"]],
  // Transactional DDL is one distributed transaction, as before.
  ["CREATE INDEX users_name ON users (name)", "distributed-write", ALL],
  // A lock or a refresh reaches every copy of what it names, inside the block.
  ["LOCK TABLE users", "each-region", ALL, false],
  ["LOCK TABLE users, eu_audit IN SHARE MODE", "each-region", ALL, false],
  ["LOCK TABLE eu_audit", "single", ["eu-west"]],
  ["/* geo: key=bob */ LOCK TABLE users", "single", ["us-east"]],
  ["REFRESH MATERIALIZED VIEW currencies", "each-region", ALL, false],
  // A relation made from a query is made where the query's rows are, never from several regions.
  ["CREATE TABLE t AS SELECT * FROM users", "refused", []],
  ["CREATE MATERIALIZED VIEW v AS SELECT tenant_id, count(*) FROM orders GROUP BY 1", "refused", []],
  ["CREATE TABLE t AS SELECT * FROM users WHERE tenant_id = 'bob'", "single", ["us-east"]],
  ["/* geo: region=ap-south */ CREATE TABLE t AS SELECT * FROM users", "single", ["ap-south"]],
];

describe("planning maintenance commands", () => {
  it.each(ROWS)("%s -> %s %j", (sql, kind, regions, outsideBlock) => {
    const decided = shapeOf(plan(analyzer.analyze(sql), { topology, directory }));
    expect(decided).toEqual({ kind, regions, ...(outsideBlock === undefined ? {} : { outsideBlock }) });
  });

  it("marks LOCK TABLE as taken only inside a block, and nothing else", () => {
    const blockOnly = ["LOCK TABLE users", "ANALYZE users", "REFRESH MATERIALIZED VIEW currencies"].map(
      (sql) => {
        const decided = plan(analyzer.analyze(sql), { topology, directory });
        return decided.kind === "each-region" ? decided.blockOnly : decided.kind;
      },
    );
    expect(blockOnly).toEqual([true, false, false]);
  });

  it("names the command as PostgreSQL names it when a block refuses it", () => {
    const names = [
      "VACUUM users",
      "REINDEX TABLE CONCURRENTLY users",
      "REINDEX DATABASE",
      "CLUSTER",
      "CREATE INDEX CONCURRENTLY i ON users (name)",
      "DROP INDEX CONCURRENTLY i",
    ].map((sql) => {
      const decided = plan(analyzer.analyze(sql), { topology, directory });
      return decided.kind === "each-region" ? decided.command : decided.kind;
    });
    expect(names).toEqual([
      "VACUUM",
      "REINDEX CONCURRENTLY",
      "REINDEX DATABASE",
      "CLUSTER",
      "CREATE INDEX CONCURRENTLY",
      "DROP INDEX CONCURRENTLY",
    ]);
  });

  it("refuses a table the configuration does not place, as for any statement", () => {
    const decided = plan(analyzer.analyze("VACUUM invoices"), { topology, directory });
    expect(decided.kind === "refused" ? decided.refusal.code : decided.kind).toBe("unplaced-table");
  });

  it("runs in the one region of a one-region deployment as any statement does", async () => {
    const config = loadConfig(`${examples}topology.toml`);
    const home = config.regions.find((region) => region.home)!;
    const one = Topology.fromConfig({
      regions: [home],
      tables: config.tables.filter((table) => table.placement !== "pinned"),
    });
    const oneAnalyzer = await Analyzer.create(schemaInfoFor(one));
    for (const sql of ["VACUUM users", "CHECKPOINT", "CREATE INDEX CONCURRENTLY i ON users (name)"]) {
      expect(
        shapeOf(plan(oneAnalyzer.analyze(sql), { topology: one, directory: new MemoryDirectory() })),
      ).toEqual({
        kind: "single",
        regions: [one.home.id],
      });
    }
  });

  it("shows the plan in explain", () => {
    expect(explain("VACUUM users", { analyzer, topology, directory })).toBe(
      [
        "  kind    Utility, ReadWrite, tables: users",
        "  plan    in each region, one at a time, outside a transaction: ap-south, eu-west, us-east",
        "  block   refused inside a transaction block, as PostgreSQL refuses it [25001]",
      ].join("\n"),
    );
    expect(explain("ANALYZE users", { analyzer, topology, directory })).toContain(
      "  block   inside a transaction block: in each region as part of it (two-phase commit)",
    );
  });
});
