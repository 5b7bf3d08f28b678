import type { Case } from "../summarize.js";

/** The cheapest exact way to combine a multi-region answer, and whether row data leaves its region. */
export const mergeTiers: Case[] = [
  { sql: "SELECT name FROM users", expect: { merge: "concat", moves: false } },
  { sql: "SELECT name FROM users LIMIT 10", expect: { merge: "concat" } },
  { sql: "SELECT name FROM users OFFSET 10", expect: { merge: "concat" } },
  { sql: "SELECT name FROM users LIMIT ALL", expect: { merge: "concat" } },
  { sql: "SELECT name FROM users LIMIT 2 + 3", expect: { merge: "gather" } },
  { sql: "SELECT name FROM users FETCH FIRST 5 ROWS ONLY", expect: { merge: "concat" } },
  { sql: "SELECT name FROM users ORDER BY name", expect: { merge: "ordered", moves: true } },
  { sql: "SELECT name FROM users ORDER BY 1 DESC NULLS LAST LIMIT 5 OFFSET 5", expect: { merge: "ordered" } },
  { sql: "SELECT id AS n FROM users ORDER BY n", expect: { merge: "ordered" } },
  { sql: "SELECT * FROM users ORDER BY 2", expect: { merge: "gather" } },
  { sql: "SELECT name FROM users ORDER BY name USING >", expect: { merge: "gather" } },
  { sql: 'SELECT name FROM users ORDER BY name COLLATE "C"', expect: { merge: "ordered" } },
  // Each region keeps its top rows with their ties; the home region applies WITH TIES once.
  {
    sql: "SELECT name FROM users ORDER BY name FETCH FIRST 3 ROWS WITH TIES",
    expect: { merge: "partial-aggregate", moves: true },
  },
  { sql: "SELECT count(*) FROM users", expect: { merge: "partial-aggregate", moves: false } },
  { sql: "SELECT count(*) FILTER (WHERE active) FROM users", expect: { merge: "partial-aggregate" } },
  { sql: "SELECT sum(total), min(total), max(total) FROM orders", expect: { merge: "partial-aggregate" } },
  {
    sql: "SELECT bool_and(active), bool_or(active), every(active) FROM users",
    expect: { merge: "partial-aggregate" },
  },
  {
    sql: "SELECT country, avg(age) FROM users GROUP BY 1 ORDER BY 2 DESC LIMIT 3",
    expect: { merge: "partial-aggregate" },
  },
  {
    sql: "SELECT country AS c, count(*) FROM users GROUP BY country ORDER BY c",
    expect: { merge: "partial-aggregate" },
  },
  {
    sql: "SELECT upper(country), count(*) FROM users GROUP BY upper(country)",
    expect: { merge: "partial-aggregate" },
  },
  {
    sql: "SELECT country || '!', count(*) + 1 FROM users GROUP BY country",
    expect: { merge: "partial-aggregate" },
  },
  {
    sql: "SELECT CASE WHEN count(*) > 10 THEN 'many' ELSE 'few' END FROM users",
    expect: { merge: "partial-aggregate", aggregates: [0] },
  },
  { sql: "SELECT coalesce(max(total), 0) FROM orders", expect: { merge: "partial-aggregate" } },
  {
    sql: "SELECT count(DISTINCT country), sum(DISTINCT age), avg(DISTINCT age) FROM users",
    expect: { merge: "partial-aggregate", moves: true },
  },
  { sql: "SELECT count(DISTINCT country) FILTER (WHERE active) FROM users", expect: { merge: "gather" } },
  { sql: "SELECT DISTINCT country FROM users", expect: { merge: "partial-aggregate" } },
  { sql: "SELECT DISTINCT * FROM users", expect: { merge: "gather" } },
  {
    sql: "SELECT DISTINCT ON (country) country, name FROM users ORDER BY country, name",
    expect: { merge: "gather" },
  },
  { sql: "SELECT country, count(*) FROM users GROUP BY ROLLUP (country)", expect: { merge: "gather" } },
  {
    sql: "SELECT country, count(*) FROM users GROUP BY GROUPING SETS ((country), ())",
    expect: { merge: "gather" },
  },
  { sql: "SELECT string_agg(name, ',') FROM users", expect: { merge: "gather" } },
  { sql: "SELECT array_agg(name) FROM users", expect: { merge: "gather" } },
  { sql: "SELECT variance(age), stddev_pop(age) FROM users", expect: { merge: "gather" } },
  { sql: "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY age) FROM users", expect: { merge: "gather" } },
  { sql: "SELECT my_median(age) FROM users", expect: { merge: "gather", aggregates: [0] } },
  { sql: "SELECT name, rank() OVER (ORDER BY age) FROM users", expect: { merge: "gather" } },
  { sql: "SELECT name, count(*) OVER () FROM users", expect: { merge: "gather" } },
  {
    sql: "SELECT id, count(*) FROM users GROUP BY id HAVING count(*) > (SELECT 1)",
    expect: { merge: "gather" },
  },
  { sql: "SELECT name, count(*) FROM users GROUP BY id", expect: { merge: "gather" } },
  { sql: "SELECT u.country, count(*) FROM users u GROUP BY country", expect: { merge: "gather" } },
  { sql: "SELECT * FROM users WHERE random() < 0.1", expect: { merge: "concat" } },
  { sql: "SELECT * FROM users LIMIT (random() * 10)::int", expect: { merge: "refused" } },
  { sql: "SELECT * FROM users WHERE age > (SELECT random() * 100)", expect: { merge: "refused" } },
  { sql: "WITH r AS (SELECT random() AS x) SELECT * FROM users, r", expect: { merge: "refused" } },
  { sql: "SELECT nextval('s'), name FROM users", expect: { merge: "refused" } },
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.buyer = u.id WHERE u.x > 3",
    expect: { cross: ["0-1"], gather: "gather" },
  },
  { sql: "SELECT * FROM users FOR UPDATE", expect: { merge: "refused", gather: "refused" } },
  { sql: "EXPLAIN SELECT * FROM users", expect: { merge: "refused" } },
  { sql: "COPY users TO STDOUT", expect: { merge: "refused" } },
  { sql: "SET search_path = a", expect: { merge: "refused" } },
  { sql: "UPDATE users SET active = false", expect: { merge: "scatter-write", moves: false } },
  { sql: "WITH x AS (SELECT count(*) AS c FROM users) SELECT * FROM x", expect: { merge: "gather" } },
  {
    sql: "SELECT * FROM users WHERE age > (SELECT avg(age) FROM users)",
    expect: { merge: "gather", cross: ["0-1"] },
  },
  {
    sql: "SELECT *, (SELECT count(*) FROM orders o WHERE o.tenant_id = u.tenant_id) FROM users u",
    expect: { merge: "concat", links: ["0-1"] },
  },
  {
    sql: "SELECT u.*, l.n FROM users u CROSS JOIN LATERAL (SELECT count(*) AS n FROM orders o WHERE o.tenant_id = u.tenant_id) l ORDER BY l.n DESC LIMIT 5",
    expect: { merge: "ordered" },
  },
  {
    sql: "SELECT * FROM (SELECT tenant_id, count(*) FROM orders GROUP BY tenant_id) s",
    expect: { merge: "concat" },
  },
  {
    sql: "SELECT * FROM (SELECT o.tenant_id, count(*) FROM orders o GROUP BY o.tenant_id) s",
    expect: { merge: "concat" },
  },
  {
    sql: "SELECT * FROM (SELECT country, count(*) FROM orders GROUP BY country) s",
    expect: { merge: "gather" },
  },
  { sql: "SELECT * FROM (SELECT * FROM users LIMIT 10) s", expect: { merge: "gather" } },
  { sql: "SELECT * FROM (SELECT DISTINCT country FROM users) d", expect: { merge: "gather" } },
  {
    sql: "SELECT * FROM (SELECT tenant_id FROM users UNION SELECT tenant_id FROM orders) t",
    expect: { merge: "gather" },
  },
  { sql: "SELECT count(*) FROM users UNION ALL SELECT count(*) FROM orders", expect: { merge: "gather" } },
  { sql: "SELECT name FROM users UNION ALL SELECT note FROM orders", expect: { merge: "concat" } },
  { sql: "UPDATE users SET x = (SELECT avg(age) FROM users)", expect: { merge: "refused" } },
  {
    sql: "INSERT INTO totals (tenant_id, n) SELECT tenant_id, count(*) FROM orders GROUP BY tenant_id",
    expect: { merge: "scatter-write" },
  },
  { sql: "INSERT INTO totals SELECT count(*) FROM orders", expect: { merge: "refused" } },
  {
    sql: "DELETE FROM orders WHERE tenant_id IN (SELECT tenant_id FROM users LIMIT 5)",
    expect: { merge: "refused" },
  },
  {
    sql: "UPDATE users u SET n = (SELECT count(*) FROM orders o WHERE o.tenant_id = u.tenant_id)",
    expect: { merge: "scatter-write", links: ["0-1"] },
  },
];
