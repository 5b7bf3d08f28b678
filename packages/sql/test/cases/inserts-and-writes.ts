import type { Case } from "../summarize.js";

/** Writes: a key per VALUES row, keys assigned by UPDATE and MERGE, and what spans regions. */
export const insertsAndWrites: Case[] = [
  { sql: "INSERT INTO users (tenant_id, name) VALUES ('a', 'x')", expect: { rows: ["'a'"], keys: ["'a'"] } },
  {
    sql: "INSERT INTO users (name, tenant_id) VALUES ('x', 'a'), ('y', 'b'), ('z', 'a')",
    expect: { rows: ["'a'", "'b'", "'a'"], keys: ["'a','b'"] },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ($1, $2), ($3, $4)",
    expect: { rows: ["$1", "$3"], keys: ["$1,$3"], params: 4 },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('a', 'x'), (lower('B'), 'y')",
    expect: { rows: ["'a'", "?"], keys: ["any"] },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES (DEFAULT, 'x')",
    expect: { rows: ["?"], keys: ["any"] },
  },
  { sql: "INSERT INTO users (name) VALUES ('x')", expect: { rows: ["?"], keys: ["any"] } },
  { sql: "INSERT INTO users VALUES ('a', 'x')", expect: { rows: ["?"], keys: ["any"] } },
  { sql: "INSERT INTO users DEFAULT VALUES", expect: { rows: null, keys: ["any"], merge: "scatter-write" } },
  { sql: "INSERT INTO currencies (code) VALUES ('EUR'), ('USD')", expect: { rows: ["?", "?"], keys: ["-"] } },
  {
    sql: "INSERT INTO accounts (id, name) VALUES (-1, 'neg'), (1, 'pos')",
    expect: { rows: ["-1", "1"], keys: ["-1,1"] },
  },
  { sql: "INSERT INTO accounts (id) VALUES ('5'::int8)", expect: { rows: ["'5'::int8"] } },
  { sql: "INSERT INTO users (tenant_id, name) VALUES ('a,b', 'x, y')", expect: { rows: ["'a,b'"] } },
  {
    sql: "INSERT INTO users (tenant_id) VALUES ('a') RETURNING id",
    expect: { returning: true, rows: ["'a'"] },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('a', 'x') ON CONFLICT (tenant_id) DO NOTHING",
    expect: { rows: ["'a'"], assignsKey: false },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('a', 'x') ON CONFLICT (tenant_id) DO UPDATE SET name = excluded.name",
    expect: { rows: ["'a'"], assignsKey: false },
  },
  {
    sql: "INSERT INTO users (tenant_id, name) VALUES ('a', 'x') ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id",
    expect: { assignsKey: true },
  },
  {
    sql: "INSERT INTO users AS u (tenant_id) VALUES ('a')",
    expect: { tables: ["users:u@0 w"], rows: ["'a'"] },
  },
  {
    sql: "INSERT INTO shop.items (tenant_id, sku) VALUES ('a', 1)",
    expect: { tables: ["shop.items@0 w"], rows: ["'a'"] },
  },
  {
    sql: "UPDATE users SET tenant_id = 'b' WHERE tenant_id = 'a'",
    expect: { assignsKey: true, keys: ["'a'"] },
  },
  { sql: "UPDATE users SET (tenant_id, name) = ('b', 'x') WHERE id = 1", expect: { assignsKey: true } },
  {
    sql: "UPDATE users SET name = 'x' WHERE tenant_id = ANY($1) RETURNING *",
    expect: { keys: ["$1[]"], returning: true },
  },
  { sql: "UPDATE users SET name = 'x' WHERE CURRENT OF c", expect: { keys: ["any"] } },
  { sql: "UPDATE ONLY users SET name = 'x'", expect: { tables: ["users@0 w only"] } },
  { sql: "DELETE FROM users WHERE tenant_id = $1 RETURNING *", expect: { keys: ["$1"], returning: true } },
  { sql: "DELETE FROM users", expect: { keys: ["any"], merge: "scatter-write" } },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = o.tenant_id WHEN MATCHED THEN UPDATE SET tenant_id = o.tenant_id",
    expect: { assignsKey: true, links: ["0-1"] },
  },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = o.tenant_id AND o.tenant_id = 'a' WHEN MATCHED THEN DELETE",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = o.tenant_id AND o.tenant_id = 'a' WHEN NOT MATCHED THEN INSERT (tenant_id, name) VALUES (o.tenant_id, 'n')",
    expect: { keys: ["any", "any"], links: ["0-1"] },
  },
  {
    sql: "MERGE INTO users u USING (SELECT 'a' AS tenant_id) s ON u.tenant_id = s.tenant_id WHEN NOT MATCHED THEN INSERT (tenant_id) VALUES ('a')",
    expect: { tables: ["users:u@0 w"], roles: ["top", "merge-source"], keys: ["any"] },
  },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = 'a' AND u.tenant_id = o.tenant_id WHEN NOT MATCHED THEN INSERT (tenant_id) VALUES ('b')",
    expect: { keys: ["'a','b'", "any"] },
  },
  {
    sql: "MERGE INTO users u USING orders o ON u.tenant_id = o.tenant_id WHEN MATCHED AND o.total > 5 THEN UPDATE SET name = 'x' WHEN NOT MATCHED THEN DO NOTHING",
    expect: { kind: "merge", primary: "writes", merge: "scatter-write" },
  },
  {
    sql: "WITH x AS (UPDATE users SET name = 'y' WHERE tenant_id = 'a' RETURNING tenant_id) SELECT count(*) FROM x",
    expect: { kind: "select", primary: "writing-cte", keys: ["'a'"], merge: "refused", gather: "refused" },
  },
];
