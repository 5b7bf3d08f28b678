import type { Case } from "../summarize.js";

/** Statement kinds, and which statements a read-only replica cannot run (with the reason). */
export const kindsAndPrimary: Case[] = [
  { sql: "SELECT 1", expect: { kind: "select", readOnly: true, primary: null, tables: [] } },
  { sql: "select now()", expect: { kind: "select", readOnly: true, volatile: [] } },
  { sql: "SELECT random() FROM users", expect: { readOnly: true, volatile: ["random"], merge: "concat" } },
  {
    sql: "SELECT nextval('order_seq')",
    expect: { readOnly: false, primary: "writing-function", volatile: ["nextval"] },
  },
  { sql: "SELECT setval('order_seq', 10)", expect: { readOnly: false, primary: "writing-function" } },
  { sql: "SELECT currval('order_seq')", expect: { readOnly: true, volatile: ["currval"] } },
  {
    sql: "SELECT pg_advisory_lock(42)",
    expect: { readOnly: false, primary: "advisory-lock", effects: ["advisory-lock pg_advisory_lock"] },
  },
  {
    sql: "SELECT pg_try_advisory_lock(1, 2)",
    expect: { primary: "advisory-lock", effects: ["advisory-lock pg_try_advisory_lock"] },
  },
  { sql: "SELECT pg_advisory_xact_lock(42)", expect: { primary: "advisory-lock", effects: [] } },
  {
    sql: "SELECT pg_advisory_unlock_all()",
    expect: { primary: "advisory-lock", effects: ["advisory-lock pg_advisory_unlock_all"] },
  },
  { sql: "SELECT pg_notify('jobs', 'go')", expect: { primary: "writing-function" } },
  { sql: "SELECT txid_current()", expect: { primary: "writing-function" } },
  {
    sql: "SELECT * INTO archive FROM users",
    expect: {
      kind: "select",
      command: "SELECT INTO",
      primary: "select-into",
      selectInto: true,
      merge: "refused",
    },
  },
  { sql: "SELECT * FROM users FOR SHARE", expect: { primary: "locking-clause", locking: "share" } },
  {
    sql: "SELECT * FROM users FOR NO KEY UPDATE",
    expect: { primary: "locking-clause", locking: "no-key-update" },
  },
  { sql: "SELECT * FROM users FOR KEY SHARE", expect: { primary: "locking-clause", locking: "key-share" } },
  {
    sql: "SELECT * FROM users u, orders o FOR SHARE OF u FOR UPDATE OF o NOWAIT",
    expect: { locking: "update" },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' FOR UPDATE SKIP LOCKED",
    expect: { locking: "update", keys: ["'a'"] },
  },
  {
    sql: "SELECT * FROM (SELECT * FROM users FOR UPDATE) s",
    expect: { primary: "locking-clause", locking: "update" },
  },
  {
    sql: "INSERT INTO users (tenant_id) VALUES ('a')",
    expect: { kind: "insert", primary: "writes", command: "INSERT" },
  },
  {
    sql: "UPDATE users SET name = 'x' WHERE tenant_id = 'a'",
    expect: { kind: "update", primary: "writes", keys: ["'a'"] },
  },
  {
    sql: "DELETE FROM users WHERE tenant_id = 'a'",
    expect: { kind: "delete", primary: "writes", keys: ["'a'"], tables: ["users@0 w"] },
  },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = o.tenant_id WHEN MATCHED THEN UPDATE SET name = 'x'",
    expect: { kind: "merge", primary: "writes", tables: ["users:u@0 w", "orders:o@0"], links: ["0-1"] },
  },
  {
    sql: "COPY users TO STDOUT",
    expect: { kind: "copy", readOnly: true, tables: ["users@0"], merge: "refused" },
  },
  {
    sql: "COPY users (tenant_id, name) FROM STDIN",
    expect: { kind: "copy", readOnly: false, primary: "writes", tables: ["users@0 w"] },
  },
  {
    sql: "COPY (SELECT * FROM orders WHERE tenant_id = 'a') TO STDOUT",
    expect: { kind: "copy", readOnly: true, keys: ["'a'"] },
  },
  {
    sql: "EXPLAIN SELECT * FROM users WHERE tenant_id = 'a'",
    expect: { kind: "explain", readOnly: true, explain: "plan", keys: ["'a'"], merge: "refused" },
  },
  { sql: "EXPLAIN DELETE FROM users", expect: { kind: "explain", readOnly: true, explain: "plan" } },
  {
    sql: "EXPLAIN ANALYZE DELETE FROM users WHERE tenant_id = 'a'",
    expect: { readOnly: false, primary: "explain-analyze-write", explain: "analyze" },
  },
  { sql: "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM users", expect: { readOnly: true, explain: "analyze" } },
  { sql: "EXPLAIN (ANALYZE false) UPDATE users SET a = 1", expect: { readOnly: true, explain: "plan" } },
  { sql: "EXPLAIN ANALYZE SELECT * FROM users FOR UPDATE", expect: { primary: "explain-analyze-write" } },
  { sql: "CALL refresh_totals()", expect: { kind: "utility", primary: "call", command: "CALL" } },
  { sql: "DO $$ BEGIN PERFORM 1; END $$", expect: { kind: "utility", primary: "do-block" } },
  {
    sql: "CREATE TABLE t (id int)",
    expect: { kind: "ddl", primary: "ddl", command: "CREATE TABLE", tables: ["t@0 w"] },
  },
  {
    sql: "ALTER TABLE users ADD COLUMN note text",
    expect: { kind: "ddl", tables: ["users@0 w"], merge: "scatter-write" },
  },
  { sql: "DROP TABLE users, shop.items", expect: { kind: "ddl", tables: ["users@0 w", "shop.items@0 w"] } },
  {
    sql: "CREATE INDEX ON users (name)",
    expect: { kind: "ddl", command: "CREATE INDEX", tables: ["users@0 w"] },
  },
  {
    sql: "TRUNCATE users, orders",
    expect: { kind: "ddl", command: "TRUNCATE TABLE", tables: ["users@0 w", "orders@0 w"] },
  },
  { sql: "CREATE VIEW v AS SELECT * FROM users", expect: { kind: "ddl", primary: "ddl" } },
  { sql: "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$", expect: { kind: "ddl" } },
  {
    sql: "CREATE TABLE archive AS SELECT * FROM users WHERE tenant_id = 'a'",
    expect: { kind: "ddl", command: "CREATE TABLE AS", keys: ["'a'"] },
  },
  { sql: "GRANT SELECT ON users TO reader", expect: { kind: "ddl" } },
  { sql: "COMMENT ON TABLE users IS 'people'", expect: { kind: "ddl" } },
  { sql: "VACUUM users", expect: { kind: "utility", primary: "writes" } },
  { sql: "ANALYZE users", expect: { kind: "utility", primary: "writes" } },
  { sql: "CHECKPOINT", expect: { kind: "utility", primary: "writes" } },
  { sql: "LOCK TABLE users IN ACCESS EXCLUSIVE MODE", expect: { kind: "utility", primary: "writes" } },
  { sql: "REFRESH MATERIALIZED VIEW totals", expect: { primary: "writes" } },
  { sql: "NOTIFY jobs, 'go'", expect: { kind: "utility", primary: "listen-notify" } },
  { sql: "SHOW search_path", expect: { kind: "utility", readOnly: true, command: "SHOW" } },
  { sql: "SHOW ALL", expect: { kind: "utility", readOnly: true } },
  // Console commands are the embedding's: without a reader, these are PostgreSQL's SHOW.
  { sql: "SHOW REGIONS", expect: { kind: "utility", command: "SHOW", console: null } },
  { sql: "/* ops */ show health;", expect: { kind: "utility", command: "SHOW", console: null } },
  { sql: "SHOW region", expect: { kind: "utility", console: null } },
  { sql: "SHOW server_version", expect: { kind: "utility", command: "SHOW", console: null } },
  { sql: "FETCH 10 FROM c", expect: { kind: "utility", readOnly: true } },
  { sql: "CLOSE c", expect: { kind: "utility", readOnly: true } },
  { sql: "", expect: { kind: "empty", readOnly: true, tables: [] } },
  { sql: "  -- only a comment\n", expect: { kind: "empty" } },
  { sql: "VALUES (1), (2)", expect: { kind: "select", tables: [], merge: "refused" } },
  { sql: "TABLE users", expect: { kind: "select", tables: ["users@0"], keys: ["any"] } },
  { sql: "SELECT * FROM users*", expect: { tables: ["users@0"] } },
  { sql: "SELECT * FROM ROWS FROM (generate_series(1, 3)) AS g(n)", expect: { tables: [], merge: "concat" } },
  {
    sql: "INSERT INTO users OVERRIDING SYSTEM VALUE VALUES (1, 'a')",
    expect: { kind: "insert", rows: ["?"], keys: ["any"] },
  },
];
