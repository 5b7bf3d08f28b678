import type { Case } from "../summarize.js";

/** Every statement quoted in the specification, with what the analysis must say about it. */
export const seedStatements: Case[] = [
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'alice'",
    expect: {
      kind: "select",
      readOnly: true,
      primary: null,
      tables: ["users@0"],
      keys: ["'alice'"],
      merge: "concat",
    },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY created_at DESC LIMIT 20",
    expect: { tables: ["users@0"], keys: ["'alice','bob'"], merge: "ordered", moves: true },
  },
  {
    sql: "SELECT country, count(*), avg(age) FROM users GROUP BY country HAVING count(*) > 100",
    expect: { keys: ["any"], aggregates: [0], merge: "partial-aggregate", moves: false },
  },
  {
    sql: "SELECT country, count(*), avg(age) FROM users GROUP BY country HAVING count(*) > 100 ORDER BY country",
    expect: { keys: ["any"], merge: "partial-aggregate" },
  },
  {
    sql: "SELECT country, count(*) AS c, sum(age) AS s, count(age) AS n FROM users GROUP BY country",
    expect: { keys: ["any"], merge: "partial-aggregate" },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('alice','a'), ('bob','b')",
    expect: {
      kind: "insert",
      readOnly: false,
      primary: "writes",
      tables: ["users@0 w"],
      keys: ["'alice','bob'"],
      rows: ["'alice'", "'bob'"],
      merge: "refused",
    },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE u.tenant_id = 'alice' AND o.tenant_id = 'bob'",
    expect: { tables: ["users:u@0", "orders:o@0"], keys: ["none", "none"], links: ["0-1"], cross: [] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = $1",
    expect: { keys: ["$1"], params: 1, merge: "concat" },
  },
  {
    sql: "SELECT * FROM users u WHERE u.tenant_id = 'alice' AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id)",
    expect: {
      tables: ["users:u@0", "orders:o@1"],
      keys: ["'alice'", "'alice'"],
      roles: ["top", "exists"],
      correlated: [1],
      links: ["0-1"],
      cross: [],
    },
  },
  {
    sql: "/* geo: key=alice */ SELECT * FROM users WHERE lower(tenant_id) = lower($1);",
    expect: { hints: "key=alice", keys: ["any"], params: 1 },
  },
  {
    sql: "/* geo: region=eu-west */ REINDEX TABLE users;",
    expect: { hints: "region=eu-west", kind: "utility", primary: "writes" },
  },
  {
    sql: "UPDATE users SET active = false WHERE last_seen < '2026-01-01'",
    expect: {
      kind: "update",
      tables: ["users@0 w"],
      keys: ["any"],
      assignsKey: false,
      merge: "scatter-write",
    },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('alice', 'a'), ('bob', 'b')",
    expect: { rows: ["'alice'", "'bob'"], keys: ["'alice','bob'"] },
  },
  {
    sql: "SELECT * FROM users WHERE name = 'ada'",
    expect: { keys: ["any"], merge: "concat" },
  },
  {
    sql: "SELECT * FROM users ORDER BY created_at DESC LIMIT 20",
    expect: { keys: ["any"], merge: "ordered" },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id",
    expect: { keys: ["any", "any"], links: ["0-1"], cross: [], merge: "concat" },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.buyer = u.id",
    expect: { keys: ["any", "any"], links: [], cross: ["0-1"], gather: "gather" },
  },
  {
    sql: "SELECT count(DISTINCT country) FROM users",
    expect: { merge: "partial-aggregate", moves: true },
  },
  {
    sql: "SELECT stddev(age) FROM users",
    expect: { merge: "gather", moves: true },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 1 OR created_at > now()",
    expect: { keys: ["any"] },
  },
  {
    sql: "SELECT * FROM ONLY users WHERE tenant_id = 'alice'",
    expect: { tables: ["users@0 only"], keys: ["'alice'"] },
  },
  {
    sql: "SELECT * FROM users WHERE id = -1",
    expect: { keys: ["any"] },
  },
  {
    sql: "SELECT * FROM accounts WHERE id = -1",
    expect: { keys: ["-1"] },
  },
  {
    sql: "WITH new_user AS (INSERT INTO users (tenant_id, name) VALUES ('alice', 'a') RETURNING *) SELECT * FROM new_user",
    expect: {
      kind: "select",
      readOnly: false,
      primary: "writing-cte",
      writingCte: true,
      tables: ["users@1 w"],
      keys: ["'alice'"],
      merge: "refused",
    },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'alice' FOR UPDATE",
    expect: {
      kind: "select",
      readOnly: false,
      primary: "locking-clause",
      locking: "update",
      merge: "refused",
    },
  },
];
