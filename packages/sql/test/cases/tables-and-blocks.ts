import type { Case } from "../summarize.js";

/** Every table read or written, in the query block it belongs to. */
export const tablesAndBlocks: Case[] = [
  { sql: "SELECT * FROM public.users", expect: { tables: ["public.users@0"], keys: ["any"] } },
  {
    sql: "SELECT * FROM shop.items WHERE tenant_id = 'a'",
    expect: { tables: ["shop.items@0"], keys: ["'a'"] },
  },
  { sql: "SELECT * FROM items WHERE tenant_id = 'a'", expect: { tables: ["items@0"], keys: ["-"] } },
  { sql: 'SELECT * FROM "Users"', expect: { tables: ["Users@0"], keys: ["-"] } },
  { sql: "SELECT * FROM USERS WHERE TENANT_ID = 'a'", expect: { tables: ["users@0"], keys: ["'a'"] } },
  { sql: "SELECT * FROM ONLY public.users u", expect: { tables: ["public.users:u@0 only"] } },
  {
    sql: "SELECT * FROM users AS u1, users AS u2 WHERE u1.tenant_id = 'a'",
    expect: { tables: ["users:u1@0", "users:u2@0"], keys: ["'a'", "any"], cross: ["0-1"] },
  },
  {
    sql: "SELECT * FROM (SELECT * FROM users WHERE tenant_id = 'a') s",
    expect: { tables: ["users@1"], roles: ["top", "subquery-from"], keys: ["'a'"] },
  },
  {
    sql: "WITH recent AS (SELECT * FROM orders WHERE tenant_id = 'a') SELECT * FROM recent",
    expect: { tables: ["orders@1"], roles: ["top", "cte"], keys: ["'a'"] },
  },
  {
    sql: "WITH users AS (SELECT 1 AS tenant_id) SELECT * FROM users",
    expect: { tables: [], roles: ["top", "cte"] },
  },
  {
    // A body does not see its own name (nor later ones) unless the WITH is RECURSIVE.
    sql: "WITH orders AS (SELECT * FROM orders WHERE tenant_id = 'a') SELECT count(*) FROM orders",
    expect: { tables: ["orders@1"], roles: ["top", "cte"], keys: ["'a'"] },
  },
  {
    sql: "WITH users AS (SELECT * FROM orders), orders AS (SELECT * FROM users) SELECT * FROM orders",
    expect: { tables: ["orders@1"], roles: ["top", "cte", "cte"] },
  },
  {
    sql: "WITH users AS (SELECT 1) SELECT * FROM public.users",
    expect: { tables: ["public.users@0"] },
  },
  {
    sql: "WITH RECURSIVE tree AS (SELECT * FROM orders WHERE id = 1 UNION ALL SELECT o.* FROM orders o JOIN tree t ON o.parent = t.id) SELECT * FROM tree",
    expect: { tables: ["orders@2", "orders:o@3"], roles: ["top", "cte", "set-operand", "set-operand"] },
  },
  {
    sql: "SELECT * FROM users u, LATERAL (SELECT * FROM orders o WHERE o.tenant_id = u.tenant_id LIMIT 3) x WHERE u.tenant_id = 'a'",
    expect: {
      tables: ["users:u@0", "orders:o@1"],
      roles: ["top", "lateral"],
      keys: ["'a'", "'a'"],
      links: ["0-1"],
      correlated: [1],
    },
  },
  {
    sql: "SELECT * FROM users u CROSS JOIN LATERAL (SELECT count(*) FROM orders o WHERE o.tenant_id = u.tenant_id) c",
    expect: { roles: ["top", "lateral"], aggregates: [1], links: ["0-1"], keys: ["any", "any"] },
  },
  {
    sql: "SELECT (SELECT count(*) FROM orders o WHERE o.tenant_id = u.tenant_id) FROM users u WHERE u.tenant_id = $1",
    expect: {
      tables: ["users:u@0", "orders:o@1"],
      roles: ["top", "sublink"],
      keys: ["$1", "$1"],
      links: ["0-1"],
    },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id IN (SELECT tenant_id FROM orders WHERE total > 100)",
    expect: {
      tables: ["users@0", "orders@1"],
      roles: ["top", "sublink"],
      links: ["0-1"],
      keys: ["any", "any"],
    },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id IN (SELECT tenant_id FROM orders)",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id NOT IN (SELECT tenant_id FROM orders)",
    expect: { keys: ["'a'", "any"], links: ["0-1"] },
  },
  // A sub-query whose rows for a key depend on other keys' rows: no link, and no key flows in.
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id IN (SELECT tenant_id FROM orders ORDER BY 1 LIMIT 1)",
    expect: { keys: ["'a'", "any"], links: [] },
  },
  {
    sql: "SELECT * FROM users u JOIN (SELECT tenant_id FROM orders ORDER BY total OFFSET 2) s ON s.tenant_id = u.tenant_id WHERE u.tenant_id = 'a'",
    expect: { keys: ["'a'", "any"], links: [] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id IN (SELECT max(tenant_id) FROM orders)",
    expect: { keys: ["'a'", "any"], links: [] },
  },
  {
    sql: "SELECT * FROM users u JOIN (SELECT tenant_id, row_number() OVER (ORDER BY total) AS n FROM orders) s ON s.tenant_id = u.tenant_id WHERE u.tenant_id = 'a'",
    expect: { keys: ["'a'", "any"], links: [] },
  },
  // Grouped by the key, or de-duplicated, each key's rows stay its own.
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id IN (SELECT o.tenant_id FROM orders o GROUP BY o.tenant_id HAVING count(*) > 2)",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id IN (SELECT DISTINCT tenant_id FROM orders)",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  // A correlated sub-query cut by LIMIT is evaluated per outer row: still tied by its key.
  {
    sql: "SELECT * FROM users u WHERE u.tenant_id = 'a' AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id ORDER BY o.id LIMIT 1)",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id AND o.tenant_id = 'alice')",
    expect: {
      tables: ["users:u@0", "orders:o@1"],
      roles: ["top", "not-exists"],
      keys: ["any", "'alice'"],
      links: ["0-1"],
    },
  },
  {
    sql: "SELECT * FROM users u WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = 'alice')",
    expect: { keys: ["any", "'alice'"], links: [], cross: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE orders.tenant_id = 'b') AND tenant_id = 'a'",
    expect: { keys: ["'a'", "'b'"], roles: ["top", "exists"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = (SELECT tenant_id FROM orders WHERE id = 5)",
    expect: { keys: ["any", "any"], roles: ["top", "sublink"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' UNION SELECT * FROM orders WHERE tenant_id = 'b'",
    expect: {
      tables: ["users@1", "orders@2"],
      roles: ["top", "set-operand", "set-operand"],
      keys: ["'a'", "'b'"],
      merge: "gather",
    },
  },
  {
    sql: "SELECT tenant_id FROM users UNION ALL SELECT tenant_id FROM orders",
    expect: { merge: "concat", cross: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users INTERSECT SELECT * FROM orders",
    expect: { merge: "gather" },
  },
  {
    sql: "INSERT INTO orders (tenant_id, total) SELECT tenant_id, 0 FROM users WHERE tenant_id = 'a'",
    expect: {
      tables: ["orders@0 w", "users@1"],
      roles: ["top", "insert-source"],
      keys: ["'a'", "'a'"],
      links: ["0-1"],
    },
  },
  {
    sql: "INSERT INTO orders (total, tenant_id) SELECT 0, u.tenant_id FROM users u",
    expect: { keys: ["any", "any"], links: ["0-1"], cross: [] },
  },
  {
    sql: "INSERT INTO orders (tenant_id, total) SELECT 'z', total FROM payments",
    expect: { keys: ["'z'", "any"], links: [], cross: ["0-1"] },
  },
  {
    sql: "INSERT INTO orders SELECT * FROM users",
    expect: { keys: ["any", "any"], links: [], cross: ["0-1"] },
  },
  {
    sql: "UPDATE orders o SET total = 0 FROM users u WHERE u.tenant_id = o.tenant_id AND u.tenant_id = 'a'",
    expect: { tables: ["orders:o@0 w", "users:u@0"], keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "DELETE FROM orders o USING users u WHERE u.tenant_id = o.tenant_id AND u.name = 'x'",
    expect: { tables: ["orders:o@0 w", "users:u@0"], links: ["0-1"], keys: ["any", "any"] },
  },
  {
    sql: "DELETE FROM orders WHERE tenant_id IN (SELECT tenant_id FROM users WHERE name = 'x')",
    expect: { roles: ["top", "sublink"], links: ["0-1"] },
  },
  {
    sql: "WITH moved AS (DELETE FROM orders WHERE tenant_id = 'a' RETURNING *) INSERT INTO payments SELECT * FROM moved",
    expect: {
      kind: "insert",
      tables: ["orders@1 w", "payments@0 w"],
      writingCte: true,
      roles: ["top", "cte", "insert-source"],
    },
  },
  {
    sql: "SELECT * FROM users u LEFT JOIN orders o ON o.tenant_id = u.tenant_id AND o.total > 5 WHERE u.tenant_id = 'a'",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u LEFT JOIN orders o ON o.tenant_id = u.tenant_id AND o.tenant_id = 'b'",
    expect: { keys: ["any", "'b'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u RIGHT JOIN orders o ON o.tenant_id = u.tenant_id AND u.tenant_id = 'b'",
    expect: { keys: ["'b'", "any"] },
  },
  {
    sql: "SELECT * FROM users u FULL JOIN orders o ON o.tenant_id = u.tenant_id AND u.tenant_id = 'b'",
    expect: { keys: ["any", "any"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) WHERE u.tenant_id = 'a'",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users NATURAL JOIN orders WHERE users.tenant_id = 'a'",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) WHERE tenant_id = 'bob'",
    expect: { keys: ["'bob'", "'bob'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) WHERE o.tenant_id = 'bob'",
    expect: { keys: ["'bob'", "'bob'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users NATURAL JOIN orders WHERE tenant_id = $1",
    expect: { keys: ["$1", "$1"], links: ["0-1"], params: 1 },
  },
  {
    sql: "SELECT * FROM users u LEFT JOIN orders o USING (tenant_id) WHERE tenant_id IN ('a', 'b')",
    expect: { keys: ["'a','b'", "'a','b'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u RIGHT JOIN orders o USING (tenant_id) WHERE tenant_id = 'a'",
    expect: { keys: ["'a'", "'a'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u FULL JOIN orders o USING (tenant_id) WHERE tenant_id = ANY('{a,b}')",
    expect: { keys: ["'a','b'", "'a','b'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) WHERE tenant_id = 'a' OR u.name = 'x'",
    expect: { keys: ["any", "any"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) JOIN payments p USING (tenant_id) WHERE tenant_id = 'z'",
    expect: { keys: ["'z'", "'z'", "'z'"], links: ["0-1", "0-2"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id), payments p WHERE p.tenant_id = 'z' AND tenant_id = 'y'",
    // PostgreSQL finds the bare name ambiguous (the merged column and p's): nothing is inferred.
    expect: { keys: ["any", "any", "'z'"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (id) WHERE tenant_id = 'a'",
    expect: { keys: ["any", "any"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o USING (tenant_id) WHERE NOT (tenant_id = 'a')",
    expect: { keys: ["any", "any"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o ON true WHERE o.tenant_id = u.tenant_id AND o.tenant_id = $2",
    expect: { keys: ["$2", "$2"], links: ["0-1"], params: 2 },
  },
  {
    sql: "SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id JOIN payments p ON p.tenant_id = o.tenant_id WHERE p.tenant_id = 'z'",
    expect: { keys: ["'z'", "'z'", "'z'"], links: ["0-1", "1-2"], cross: [] },
  },
  {
    sql: "SELECT * FROM users u JOIN currencies c ON c.code = u.currency WHERE u.tenant_id = 'a'",
    expect: { tables: ["users:u@0", "currencies:c@0"], keys: ["'a'", "-"], cross: [] },
  },
  {
    sql: "SELECT * FROM users TABLESAMPLE SYSTEM (10) WHERE tenant_id = 'a'",
    expect: { tables: ["users@0"], keys: ["'a'"] },
  },
  {
    sql: "SELECT u.*, (SELECT max(total) FROM orders) FROM users u",
    expect: { roles: ["top", "sublink"], aggregates: [1], cross: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = 'a' AND EXISTS (SELECT 1 FROM orders WHERE EXISTS (SELECT 1 FROM payments p WHERE p.tenant_id = 'c'))",
    expect: { roles: ["top", "exists", "exists"], keys: ["'a'", "any", "'c'"] },
  },
  {
    sql: "SELECT * FROM users u WHERE u.tenant_id = 'a' AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id AND EXISTS (SELECT 1 FROM payments p WHERE p.tenant_id = o.tenant_id))",
    expect: { keys: ["'a'", "'a'", "'a'"], links: ["0-1", "1-2"], correlated: [1, 2] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id = ANY (SELECT tenant_id FROM orders)",
    expect: { links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM users WHERE tenant_id > ALL (SELECT tenant_id FROM orders)",
    expect: { links: [], cross: ["0-1"] },
  },
  {
    sql: "SELECT ARRAY(SELECT total FROM orders o WHERE o.tenant_id = u.tenant_id) FROM users u",
    expect: { roles: ["top", "sublink"], links: ["0-1"] },
  },
  {
    sql: "SELECT * FROM generate_series(1, 3) g JOIN users u ON u.id = g",
    expect: { tables: ["users:u@0"], keys: ["any"] },
  },
  {
    sql: "SELECT * FROM users u, orders o WHERE o.tenant_id = u.tenant_id AND u.tenant_id IN ('a', 'b') AND o.tenant_id IN ('b', 'c')",
    expect: { keys: ["'b'", "'b'"] },
  },
];
