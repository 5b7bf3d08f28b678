import type { Case } from "../summarize.js";

/**
 * Maintenance commands: the tables they name (the copies they must reach), or none when they act
 * on every region, and whether PostgreSQL refuses them inside a transaction block.
 */
export const maintenance: Case[] = [
  {
    sql: "VACUUM users",
    expect: {
      kind: "utility",
      command: "VACUUM",
      primary: "writes",
      tables: ["users@0 w"],
      maintenance: "VACUUM tables outside-block",
    },
  },
  {
    sql: "VACUUM (VERBOSE, ANALYZE) users, shop.items (tenant_id)",
    expect: { tables: ["users@0 w", "shop.items@0 w"], maintenance: "VACUUM tables outside-block" },
  },
  { sql: "VACUUM FULL users", expect: { maintenance: "VACUUM tables outside-block" } },
  {
    sql: "VACUUM",
    expect: { command: "VACUUM", tables: [], maintenance: "VACUUM everywhere outside-block" },
  },
  {
    sql: "ANALYZE users",
    expect: { kind: "utility", command: "ANALYZE", tables: ["users@0 w"], maintenance: "ANALYZE tables" },
  },
  {
    sql: "ANALYZE VERBOSE orders (total)",
    expect: { tables: ["orders@0 w"], maintenance: "ANALYZE tables" },
  },
  { sql: "ANALYZE", expect: { command: "ANALYZE", tables: [], maintenance: "ANALYZE everywhere" } },
  {
    sql: "CHECKPOINT",
    expect: { kind: "utility", command: "CHECKPOINT", maintenance: "CHECKPOINT everywhere" },
  },
  {
    sql: "REINDEX TABLE users",
    expect: { command: "REINDEX", tables: ["users@0 w"], maintenance: "REINDEX tables" },
  },
  { sql: "REINDEX (VERBOSE) TABLE users", expect: { maintenance: "REINDEX tables" } },
  {
    sql: "REINDEX TABLE CONCURRENTLY users",
    expect: { tables: ["users@0 w"], maintenance: "REINDEX CONCURRENTLY tables outside-block" },
  },
  {
    sql: "REINDEX (CONCURRENTLY false) TABLE users",
    expect: { maintenance: "REINDEX tables" },
  },
  // An index's table is not in the text.
  { sql: "REINDEX INDEX users_pkey", expect: { tables: [], maintenance: "REINDEX everywhere" } },
  {
    sql: "REINDEX INDEX CONCURRENTLY users_pkey",
    expect: { tables: [], maintenance: "REINDEX CONCURRENTLY everywhere outside-block" },
  },
  { sql: "REINDEX SCHEMA public", expect: { maintenance: "REINDEX SCHEMA everywhere outside-block" } },
  { sql: "REINDEX DATABASE", expect: { maintenance: "REINDEX DATABASE everywhere outside-block" } },
  { sql: "REINDEX SYSTEM", expect: { maintenance: "REINDEX SYSTEM everywhere outside-block" } },
  {
    sql: "REINDEX DATABASE CONCURRENTLY",
    expect: { maintenance: "REINDEX CONCURRENTLY everywhere outside-block" },
  },
  {
    sql: "CLUSTER users USING users_pkey",
    expect: { command: "CLUSTER", tables: ["users@0 w"], maintenance: "CLUSTER tables" },
  },
  { sql: "CLUSTER users", expect: { tables: ["users@0 w"], maintenance: "CLUSTER tables" } },
  { sql: "CLUSTER", expect: { tables: [], maintenance: "CLUSTER everywhere outside-block" } },
  {
    sql: "CREATE INDEX CONCURRENTLY users_name ON users (name)",
    expect: {
      kind: "ddl",
      command: "CREATE INDEX",
      primary: "ddl",
      tables: ["users@0 w"],
      maintenance: "CREATE INDEX CONCURRENTLY tables outside-block",
    },
  },
  {
    sql: "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS i ON shop.items (tenant_id, sku)",
    expect: { tables: ["shop.items@0 w"], maintenance: "CREATE INDEX CONCURRENTLY tables outside-block" },
  },
  {
    sql: "DROP INDEX CONCURRENTLY users_name",
    expect: {
      kind: "ddl",
      command: "DROP INDEX",
      tables: [],
      maintenance: "DROP INDEX CONCURRENTLY everywhere outside-block",
    },
  },
  {
    sql: "DROP INDEX CONCURRENTLY IF EXISTS public.users_name",
    expect: { maintenance: "DROP INDEX CONCURRENTLY everywhere outside-block" },
  },
  { sql: "CREATE INDEX CONCURRENTLY ON users (name)", expect: { tables: ["users@0 w"] } },
  // Transactional DDL stays DDL: one distributed transaction where it spans regions.
  { sql: "CREATE INDEX users_name ON users (name)", expect: { kind: "ddl", maintenance: null } },
  { sql: "DROP INDEX users_name", expect: { kind: "ddl", maintenance: null } },
  // A lock or a refresh reaches every copy of its tables; PostgreSQL takes a lock only in a block.
  {
    sql: "LOCK TABLE users",
    expect: {
      kind: "utility",
      command: "LOCK TABLE",
      tables: ["users@0 w"],
      maintenance: "LOCK TABLE tables block-only",
    },
  },
  {
    sql: "LOCK TABLE users, shop.items IN SHARE MODE NOWAIT",
    expect: { tables: ["users@0 w", "shop.items@0 w"], maintenance: "LOCK TABLE tables block-only" },
  },
  {
    sql: "REFRESH MATERIALIZED VIEW CONCURRENTLY totals",
    expect: { kind: "utility", tables: ["totals@0 w"], maintenance: "REFRESH MATERIALIZED VIEW tables" },
  },
];
