/**
 * The fixed statement list. `ordered` is true only when the ORDER BY is a total order over the
 * answer (it ends in a key, or in every output column); otherwise rows compare as a multiset.
 * `params` makes a prepared statement: the values are bound as text, untyped unless the SQL casts.
 */
export const FAMILIES = [
  "aggregate",
  "order-limit",
  "distinct",
  "set-operation",
  "window",
  "ordered-aggregate",
  "join-on-key",
  "join-off-key",
  "subquery",
  "replicated-pinned",
  "prepared",
] as const;
export type Family = (typeof FAMILIES)[number];

export interface FidelityStatement {
  readonly family: Family;
  readonly name: string;
  readonly sql: string;
  readonly ordered: boolean;
  readonly params?: readonly (string | null)[];
}

type Entry = readonly [name: string, sql: string, ordered: boolean, params?: readonly (string | null)[]];

const families: Record<Family, readonly Entry[]> = {
  aggregate: [
    ["count-all", "SELECT count(*) FROM accounts", false],
    [
      "count-column-nulls",
      "SELECT count(city), count(score), count(ratio), count(active) FROM accounts",
      false,
    ],
    ["sum-integer", "SELECT sum(qty) FROM events", false],
    [
      "sum-numeric",
      "SELECT sum(balance), sum(amount) FROM accounts JOIN events USING (tenant_id) WHERE false",
      false,
    ],
    ["sum-numeric-scale", "SELECT sum(balance) FROM accounts", false],
    ["sum-numeric-varying", "SELECT sum(ratio) FROM accounts", false],
    [
      "avg-numeric-scale",
      "SELECT avg(balance), avg(amount::numeric(12,3)) FROM accounts, (SELECT 1.5 AS amount) x",
      false,
    ],
    ["avg-numeric-varying", "SELECT avg(ratio) FROM accounts", false],
    ["avg-integer", "SELECT avg(qty) FROM events", false],
    ["avg-float", "SELECT avg(score), sum(score) FROM accounts", false],
    [
      "min-max-mixed",
      "SELECT min(balance), max(balance), min(name), max(name), min(opened), max(opened), min(uid::text), max(uid::text) FROM accounts",
      false,
    ],
    ["min-max-text-collation", "SELECT min(city), max(city) FROM accounts", false],
    ["bool-and-or", "SELECT bool_and(active), bool_or(active), every(balance > -5000) FROM accounts", false],
    [
      "count-distinct",
      "SELECT count(DISTINCT plan), count(DISTINCT city), count(DISTINCT kind) FROM accounts, (SELECT 'x' AS kind) k",
      false,
    ],
    [
      "count-distinct-events",
      "SELECT count(DISTINCT kind), count(DISTINCT account_id), count(DISTINCT tenant_id) FROM events",
      false,
    ],
    [
      "group-plan",
      "SELECT plan, count(*), sum(balance), avg(balance) FROM accounts GROUP BY plan ORDER BY plan",
      true,
    ],
    [
      "group-tenant",
      "SELECT tenant_id, count(*), min(id), max(id), sum(qty) FROM events GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "group-city-nulls",
      "SELECT city, count(*), bool_or(active) FROM accounts GROUP BY city ORDER BY city NULLS FIRST",
      true,
    ],
    [
      "group-two-columns",
      "SELECT plan, active, count(*), sum(score) FROM accounts GROUP BY plan, active ORDER BY plan, active NULLS LAST",
      true,
    ],
    [
      "group-having-count",
      "SELECT kind, count(*) FROM events GROUP BY kind HAVING count(*) > 300 ORDER BY kind",
      true,
    ],
    [
      "group-having-sum",
      "SELECT tenant_id, sum(amount) FROM events GROUP BY tenant_id HAVING sum(amount) > 40000 ORDER BY tenant_id",
      true,
    ],
    [
      "group-having-avg",
      "SELECT plan, avg(ratio) FROM accounts GROUP BY plan HAVING avg(ratio) < 1 ORDER BY plan",
      true,
    ],
    [
      "group-count-distinct",
      "SELECT kind, count(DISTINCT tenant_id), count(DISTINCT account_id) FROM events GROUP BY kind ORDER BY kind",
      true,
    ],
    [
      "group-expression",
      "SELECT date_trunc('month', at) AS month, count(*), sum(weight) FROM events GROUP BY 1 ORDER BY 1",
      true,
    ],
    [
      "group-bool-aggregates",
      "SELECT tenant_id, bool_and(qty > 0), bool_or(qty < 0) FROM events GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "group-filter",
      "SELECT plan, count(*) FILTER (WHERE active), sum(balance) FILTER (WHERE balance < 0) FROM accounts GROUP BY plan ORDER BY plan",
      true,
    ],
    ["group-unordered", "SELECT kind, max(amount), min(at) FROM events GROUP BY kind", false],
    [
      "aggregate-some-tenants",
      "SELECT count(*), sum(amount) FROM events WHERE tenant_id IN ('acme', 'delta', '東京')",
      false,
    ],
    ["aggregate-one-tenant", "SELECT count(*), avg(amount) FROM events WHERE tenant_id = 'o''neil'", false],
  ],
  "order-limit": [
    ["int-limit", "SELECT tenant_id, id, qty FROM events ORDER BY qty, tenant_id, id LIMIT 25", true],
    [
      "int-desc-offset",
      "SELECT tenant_id, id, qty FROM events ORDER BY qty DESC NULLS LAST, tenant_id, id LIMIT 20 OFFSET 40",
      true,
    ],
    [
      "int-nulls-first",
      "SELECT tenant_id, id, qty FROM events ORDER BY qty NULLS FIRST, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "int-desc-nulls-first",
      "SELECT tenant_id, id, qty FROM events ORDER BY qty DESC NULLS FIRST, id, tenant_id LIMIT 30",
      true,
    ],
    ["key-id-only-limit", "SELECT id, tenant_id FROM accounts ORDER BY id DESC, tenant_id LIMIT 15", true],
    [
      "numeric-limit",
      "SELECT tenant_id, id, balance FROM accounts ORDER BY balance, tenant_id, id LIMIT 20",
      true,
    ],
    [
      "numeric-desc",
      "SELECT balance, tenant_id, id FROM accounts ORDER BY balance DESC, tenant_id, id LIMIT 20 OFFSET 5",
      true,
    ],
    [
      "numeric-varying-scale",
      "SELECT tenant_id, id, ratio FROM accounts ORDER BY ratio NULLS FIRST, tenant_id, id LIMIT 40",
      true,
    ],
    [
      "numeric-varying-desc",
      "SELECT ratio, tenant_id, id FROM accounts ORDER BY ratio DESC NULLS LAST, tenant_id, id LIMIT 40",
      true,
    ],
    [
      "numeric-amount-offset",
      "SELECT tenant_id, id, amount FROM events ORDER BY amount, tenant_id, id LIMIT 10 OFFSET 100",
      true,
    ],
    ["float-limit", "SELECT tenant_id, id, score FROM accounts ORDER BY score, tenant_id, id LIMIT 25", true],
    [
      "float-desc-nulls",
      "SELECT tenant_id, id, score FROM accounts ORDER BY score DESC NULLS FIRST, tenant_id, id LIMIT 25",
      true,
    ],
    [
      "float-weight",
      "SELECT weight, tenant_id, id FROM events ORDER BY weight DESC, tenant_id, id LIMIT 30",
      true,
    ],
    ["uuid-limit", "SELECT uid, tenant_id, id FROM accounts ORDER BY uid LIMIT 25", true],
    ["uuid-desc-offset", "SELECT uid, name FROM accounts ORDER BY uid DESC LIMIT 10 OFFSET 10", true],
    [
      "text-collation",
      "SELECT name, tenant_id, id FROM accounts ORDER BY name, tenant_id, id LIMIT 40",
      true,
    ],
    [
      "text-collation-desc",
      "SELECT city, tenant_id, id FROM accounts ORDER BY city DESC NULLS LAST, tenant_id, id LIMIT 40",
      true,
    ],
    [
      "text-collation-nulls-first",
      "SELECT city, tenant_id, id FROM accounts ORDER BY city NULLS FIRST, tenant_id, id LIMIT 30",
      true,
    ],
    ["text-key", "SELECT tenant_id, count(*) OVER () FROM accounts ORDER BY tenant_id, id LIMIT 5", true],
    [
      "text-kind-offset",
      "SELECT kind, tenant_id, id FROM events ORDER BY kind, tenant_id, id LIMIT 20 OFFSET 500",
      true,
    ],
    [
      "timestamp-asc",
      "SELECT opened, tenant_id, id FROM accounts ORDER BY opened, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "timestamp-nulls-first",
      "SELECT opened, tenant_id, id FROM accounts ORDER BY opened NULLS FIRST, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "timestamp-desc",
      "SELECT opened, tenant_id, id FROM accounts ORDER BY opened DESC, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "timestamp-desc-nulls-last",
      "SELECT opened, tenant_id, id FROM accounts ORDER BY opened DESC NULLS LAST, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "timestamp-events",
      "SELECT at, tenant_id, id FROM events ORDER BY at DESC, id DESC, tenant_id DESC LIMIT 30 OFFSET 7",
      true,
    ],
    [
      "mixed-keys",
      "SELECT active, balance, tenant_id, id FROM accounts ORDER BY active NULLS FIRST, balance DESC, tenant_id, id LIMIT 30",
      true,
    ],
    [
      "expression-key",
      "SELECT tenant_id, id, qty * 2 AS double FROM events ORDER BY qty * 2 DESC NULLS LAST, tenant_id, id LIMIT 15",
      true,
    ],
    ["ordinal-key", "SELECT balance, tenant_id, id FROM accounts ORDER BY 1, 2, 3 LIMIT 15", true],
    [
      "filtered-all-regions",
      "SELECT tenant_id, id, amount FROM events WHERE kind = 'buy' AND amount < 0 ORDER BY amount, tenant_id, id",
      true,
    ],
    ["offset-only", "SELECT tenant_id, id FROM accounts ORDER BY id, tenant_id OFFSET 1000", true],
    ["limit-zero", "SELECT tenant_id, id FROM accounts ORDER BY id, tenant_id LIMIT 0", true],
    [
      "limit-no-order",
      "SELECT count(*) FROM (SELECT id FROM events WHERE tenant_id = 'delta' LIMIT 7) s",
      false,
    ],
    [
      "two-tenants",
      "SELECT tenant_id, id, balance FROM accounts WHERE tenant_id IN ('acme', '東京') ORDER BY balance DESC, tenant_id, id LIMIT 12",
      true,
    ],
  ],
  distinct: [
    ["distinct-one", "SELECT DISTINCT plan FROM accounts", false],
    ["distinct-one-ordered", "SELECT DISTINCT city FROM accounts ORDER BY city NULLS FIRST", true],
    ["distinct-two", "SELECT DISTINCT plan, active FROM accounts ORDER BY plan, active", true],
    ["distinct-kind", "SELECT DISTINCT kind FROM events ORDER BY kind DESC", true],
    ["distinct-timestamp", "SELECT DISTINCT date_trunc('day', at) FROM events ORDER BY 1 LIMIT 10", true],
    ["distinct-numeric", "SELECT DISTINCT ratio FROM accounts ORDER BY ratio NULLS LAST LIMIT 30", true],
    [
      "distinct-on-plan",
      "SELECT DISTINCT ON (plan) plan, tenant_id, id, balance FROM accounts ORDER BY plan, balance DESC, tenant_id, id",
      true,
    ],
    [
      "distinct-on-kind",
      "SELECT DISTINCT ON (kind) kind, tenant_id, id, amount FROM events ORDER BY kind, amount, tenant_id, id",
      true,
    ],
    [
      "distinct-on-tenant",
      "SELECT DISTINCT ON (tenant_id) tenant_id, id, at FROM events ORDER BY tenant_id, at DESC, id",
      true,
    ],
    [
      "distinct-on-city",
      "SELECT DISTINCT ON (city) city, name, tenant_id, id FROM accounts ORDER BY city, name, tenant_id, id",
      true,
    ],
    ["distinct-count-sub", "SELECT count(*) FROM (SELECT DISTINCT name FROM accounts) d", false],
    [
      "distinct-tenant-filter",
      "SELECT DISTINCT kind, qty FROM events WHERE tenant_id IN ('delta', 'kilo') ORDER BY kind, qty",
      true,
    ],
  ],
  "set-operation": [
    ["union", "SELECT city FROM accounts UNION SELECT kind FROM events", false],
    [
      "union-ordered",
      "SELECT city AS word FROM accounts UNION SELECT kind FROM events ORDER BY word NULLS FIRST",
      true,
    ],
    [
      "union-all-count",
      "SELECT count(*) FROM (SELECT id FROM accounts UNION ALL SELECT id FROM events) u",
      false,
    ],
    [
      "union-all",
      "SELECT tenant_id, id FROM accounts WHERE balance < -1900 UNION ALL SELECT tenant_id, id FROM events WHERE amount < -99",
      false,
    ],
    [
      "union-tenants",
      "SELECT plan FROM accounts WHERE tenant_id = 'acme' UNION SELECT plan FROM accounts WHERE tenant_id = 'delta' ORDER BY plan",
      true,
    ],
    ["intersect", "SELECT account_id FROM events INTERSECT SELECT id FROM accounts ORDER BY 1", true],
    [
      "intersect-all",
      "SELECT kind FROM events WHERE qty > 15 INTERSECT ALL SELECT kind FROM events WHERE qty < -3",
      false,
    ],
    [
      "intersect-regions",
      "SELECT name FROM accounts WHERE tenant_id = 'acme' INTERSECT SELECT name FROM accounts WHERE tenant_id = 'india' ORDER BY name",
      true,
    ],
    ["except", "SELECT id FROM accounts EXCEPT SELECT account_id FROM events ORDER BY id", true],
    ["except-all", "SELECT kind FROM events EXCEPT ALL SELECT kind FROM events WHERE qty IS NULL", false],
    [
      "except-text",
      "SELECT city FROM accounts EXCEPT SELECT city FROM accounts WHERE tenant_id = 'zoë' ORDER BY city",
      true,
    ],
    [
      "union-limit",
      "SELECT tenant_id, id FROM accounts UNION SELECT tenant_id, id FROM events ORDER BY id DESC, tenant_id LIMIT 20",
      true,
    ],
  ],
  window: [
    [
      "row-number-per-tenant",
      "SELECT tenant_id, id, row_number() OVER (PARTITION BY tenant_id ORDER BY balance, id) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "rank-global",
      "SELECT tenant_id, id, rank() OVER (ORDER BY plan) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "dense-rank-numeric",
      "SELECT tenant_id, id, dense_rank() OVER (ORDER BY ratio NULLS FIRST) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "running-sum",
      "SELECT tenant_id, id, sum(amount) OVER (PARTITION BY tenant_id ORDER BY id) FROM events ORDER BY tenant_id, id",
      true,
    ],
    [
      "global-running-sum",
      "SELECT tenant_id, id, sum(balance) OVER (ORDER BY balance, tenant_id, id) FROM accounts ORDER BY balance, tenant_id, id LIMIT 50",
      true,
    ],
    [
      "lag-lead",
      "SELECT tenant_id, id, lag(amount) OVER w, lead(at) OVER w FROM events WINDOW w AS (PARTITION BY tenant_id ORDER BY id) ORDER BY tenant_id, id",
      true,
    ],
    [
      "count-over-all",
      "SELECT tenant_id, id, count(*) OVER () FROM accounts ORDER BY tenant_id, id LIMIT 20",
      true,
    ],
    [
      "share-of-total",
      "SELECT tenant_id, sum(amount) / sum(sum(amount)) OVER () AS share FROM events GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "ntile",
      "SELECT tenant_id, id, ntile(4) OVER (ORDER BY uid) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "avg-partition-plan",
      "SELECT tenant_id, id, avg(balance) OVER (PARTITION BY plan) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "first-value-text",
      "SELECT tenant_id, id, first_value(name) OVER (PARTITION BY city ORDER BY name, tenant_id, id) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
    [
      "percent-rank",
      "SELECT tenant_id, id, percent_rank() OVER (ORDER BY weight) FROM events WHERE kind = 'refund' ORDER BY tenant_id, id",
      true,
    ],
    [
      "top-per-tenant",
      "SELECT tenant_id, id, amount FROM (SELECT tenant_id, id, amount, row_number() OVER (PARTITION BY tenant_id ORDER BY amount DESC, id) AS r FROM events) t WHERE r <= 3 ORDER BY tenant_id, r",
      true,
    ],
    [
      "frame-rows",
      "SELECT tenant_id, id, sum(qty) OVER (PARTITION BY tenant_id ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM events WHERE tenant_id IN ('acme', 'golf', 'kilo') ORDER BY tenant_id, id",
      true,
    ],
    [
      "cume-dist-timestamp",
      "SELECT tenant_id, id, cume_dist() OVER (ORDER BY opened NULLS FIRST) FROM accounts ORDER BY tenant_id, id",
      true,
    ],
  ],
  "ordered-aggregate": [
    [
      "string-agg-tenant",
      "SELECT tenant_id, string_agg(name, ', ' ORDER BY id) FROM accounts GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "string-agg-all",
      "SELECT string_agg(tenant_id || ':' || id, ',' ORDER BY balance, tenant_id, id) FROM accounts WHERE balance > 8900",
      false,
    ],
    [
      "string-agg-collation",
      "SELECT plan, string_agg(DISTINCT city, '|' ORDER BY city) FROM accounts GROUP BY plan ORDER BY plan",
      true,
    ],
    [
      "array-agg-int",
      "SELECT kind, array_agg(qty ORDER BY qty NULLS FIRST, tenant_id, id) FROM events WHERE weight > 990 GROUP BY kind ORDER BY kind",
      true,
    ],
    [
      "array-agg-numeric",
      "SELECT tenant_id, array_agg(ratio ORDER BY id) FROM accounts WHERE id <= 6 GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    ["array-agg-uuid", "SELECT array_agg(uid ORDER BY uid) FROM accounts WHERE id = 1", false],
    [
      "array-agg-timestamp",
      "SELECT plan, array_agg(opened ORDER BY opened DESC NULLS LAST, tenant_id, id) FROM accounts WHERE id < 4 GROUP BY plan ORDER BY plan",
      true,
    ],
    ["array-agg-distinct", "SELECT array_agg(DISTINCT kind ORDER BY kind) FROM events", false],
    [
      "string-agg-key-order",
      "SELECT string_agg(DISTINCT tenant_id, ' ' ORDER BY tenant_id) FROM events",
      false,
    ],
    [
      "json-agg",
      "SELECT tenant_id, json_agg(id ORDER BY id) FROM accounts WHERE score > 95 GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
  ],
  "join-on-key": [
    [
      "inner-key",
      "SELECT a.tenant_id, a.id, e.id FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id ORDER BY a.tenant_id, a.id, e.id LIMIT 60",
      true,
    ],
    [
      "inner-key-aggregate",
      "SELECT a.plan, count(*), sum(e.amount) FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id GROUP BY a.plan ORDER BY a.plan",
      true,
    ],
    [
      "left-key",
      "SELECT a.tenant_id, a.id, count(e.id) FROM accounts a LEFT JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id GROUP BY a.tenant_id, a.id ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "left-key-nulls",
      "SELECT a.tenant_id, a.id FROM accounts a LEFT JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id WHERE e.id IS NULL ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "using-key",
      "SELECT tenant_id, count(*) FROM accounts JOIN events USING (tenant_id) WHERE accounts.id = 1 GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "key-one-tenant",
      "SELECT a.name, e.kind, e.amount FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id WHERE a.tenant_id = 'bäcker' ORDER BY e.id",
      true,
    ],
    [
      "key-with-replicated",
      "SELECT p.label, count(*), sum(e.amount) FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id JOIN plans p ON p.code = a.plan GROUP BY p.label ORDER BY p.label",
      true,
    ],
    [
      "key-order-limit",
      "SELECT a.tenant_id, e.id, e.amount FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id ORDER BY e.amount DESC, a.tenant_id, e.id LIMIT 10",
      true,
    ],
    [
      "key-full-join",
      "SELECT count(*) FROM accounts a FULL JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id",
      false,
    ],
    [
      "key-self-join",
      "SELECT a.tenant_id, a.id, b.id FROM accounts a JOIN accounts b ON b.tenant_id = a.tenant_id AND b.id = a.id + 1 WHERE a.balance > b.balance + 8000 ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "key-two-tenants",
      "SELECT a.tenant_id, sum(e.qty) FROM accounts a JOIN events e ON e.tenant_id = a.tenant_id AND e.account_id = a.id WHERE a.tenant_id IN ('acme', 'echo') GROUP BY a.tenant_id ORDER BY a.tenant_id",
      true,
    ],
    [
      "key-lateral",
      "SELECT a.tenant_id, a.id, l.amount FROM accounts a CROSS JOIN LATERAL (SELECT amount FROM events e WHERE e.tenant_id = a.tenant_id AND e.account_id = a.id ORDER BY amount DESC, id LIMIT 1) l WHERE a.id <= 3 ORDER BY a.tenant_id, a.id",
      true,
    ],
  ],
  "join-off-key": [
    [
      "off-key-id",
      "SELECT a.tenant_id, a.id, e.tenant_id, e.id FROM accounts a JOIN events e ON e.account_id = a.id AND e.tenant_id <> a.tenant_id WHERE a.id = 7 AND e.qty = 20 ORDER BY 1, 2, 3, 4",
      true,
    ],
    [
      "off-key-count",
      "SELECT count(*) FROM accounts a JOIN events e ON e.account_id = a.id WHERE a.balance > 8500",
      false,
    ],
    [
      "off-key-city",
      "SELECT a.city, count(*) FROM accounts a JOIN accounts b ON a.city = b.city AND a.tenant_id <> b.tenant_id WHERE a.id < 5 AND b.id < 5 GROUP BY a.city ORDER BY a.city",
      true,
    ],
    [
      "off-key-name",
      "SELECT a.tenant_id, a.id, b.tenant_id, b.id FROM accounts a JOIN accounts b ON a.name = b.name AND a.tenant_id < b.tenant_id WHERE a.score > 98 AND b.score > 98 ORDER BY 1, 2, 3, 4",
      true,
    ],
    [
      "off-key-left",
      "SELECT a.tenant_id, a.id, count(e.id) FROM accounts a LEFT JOIN events e ON e.account_id = a.id AND e.kind = 'ümlaut' AND e.qty = 20 WHERE a.id <= 3 GROUP BY a.tenant_id, a.id ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "off-key-numeric",
      "SELECT e.tenant_id, e.id, a.tenant_id, a.id FROM events e JOIN accounts a ON round(e.amount) = round(a.balance) ORDER BY 1, 2, 3, 4",
      true,
    ],
    [
      "off-key-timestamp",
      "SELECT count(*), min(a.tenant_id), max(e.tenant_id) FROM accounts a JOIN events e ON e.at = a.opened WHERE a.plan = 'pro' AND e.kind = 'buy'",
      false,
    ],
    [
      "off-key-aggregate",
      "SELECT a.plan, count(DISTINCT e.tenant_id) FROM accounts a JOIN events e ON e.account_id = a.id WHERE a.id = 10 GROUP BY a.plan ORDER BY a.plan",
      true,
    ],
    [
      "off-key-two-regions",
      "SELECT a.id, e.id FROM accounts a JOIN events e ON e.account_id = a.id WHERE a.tenant_id = 'acme' AND e.tenant_id = 'delta' AND e.qty > 18 ORDER BY a.id, e.id",
      true,
    ],
    [
      "off-key-semi",
      "SELECT count(*) FROM accounts a WHERE a.uid IN (SELECT b.uid FROM accounts b WHERE b.tenant_id <> a.tenant_id)",
      false,
    ],
  ],
  subquery: [
    [
      "in-list-sub",
      "SELECT tenant_id, id FROM accounts WHERE plan IN (SELECT code FROM plans WHERE price > 15) AND balance > 8500 ORDER BY tenant_id, id",
      true,
    ],
    [
      "in-key-sub",
      "SELECT tenant_id, id FROM accounts a WHERE (tenant_id, id) IN (SELECT tenant_id, account_id FROM events WHERE weight = 1000) ORDER BY tenant_id, id",
      true,
    ],
    [
      "in-off-key",
      "SELECT tenant_id, id FROM accounts WHERE id IN (SELECT account_id FROM events WHERE qty = 20 AND kind = 'refund') AND id < 20 ORDER BY tenant_id, id",
      true,
    ],
    [
      "exists-correlated",
      "SELECT a.tenant_id, a.id FROM accounts a WHERE EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = a.tenant_id AND e.account_id = a.id AND e.qty = 20) ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "not-exists-correlated",
      "SELECT a.tenant_id, a.id FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = a.tenant_id AND e.account_id = a.id) ORDER BY a.tenant_id, a.id",
      true,
    ],
    [
      "not-exists-off-key",
      "SELECT count(*) FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.account_id = a.id)",
      false,
    ],
    [
      "not-in-nulls",
      "SELECT count(*) FROM events WHERE qty NOT IN (SELECT qty FROM events WHERE tenant_id = 'kilo' AND id < 4)",
      false,
    ],
    [
      "scalar-global",
      "SELECT tenant_id, id, balance FROM accounts WHERE balance > (SELECT avg(balance) + 4800 FROM accounts) ORDER BY tenant_id, id",
      true,
    ],
    [
      "scalar-in-select",
      "SELECT (SELECT count(*) FROM events) AS events, (SELECT max(balance) FROM accounts) AS top",
      false,
    ],
    [
      "scalar-correlated",
      "SELECT a.tenant_id, a.id, (SELECT count(*) FROM events e WHERE e.tenant_id = a.tenant_id AND e.account_id = a.id) FROM accounts a ORDER BY a.tenant_id, a.id LIMIT 50",
      true,
    ],
    [
      "correlated-avg",
      "SELECT e.tenant_id, e.id FROM events e WHERE e.amount > (SELECT avg(amount) + 350 FROM events f WHERE f.tenant_id = e.tenant_id) ORDER BY e.tenant_id, e.id",
      true,
    ],
    [
      "derived-aggregate",
      "SELECT plan, max(total) FROM (SELECT a.tenant_id, a.plan, sum(balance) AS total FROM accounts a GROUP BY a.tenant_id, a.plan) s GROUP BY plan ORDER BY plan",
      true,
    ],
    [
      "cte",
      "WITH big AS (SELECT tenant_id, id FROM events WHERE amount > 890) SELECT tenant_id, count(*) FROM big GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "any-array",
      "SELECT tenant_id, id FROM accounts WHERE city = ANY (ARRAY['Zürich', 'Łódź']) AND id < 10 ORDER BY tenant_id, id",
      true,
    ],
    [
      "exists-uncorrelated",
      "SELECT count(*) FROM accounts WHERE EXISTS (SELECT 1 FROM events WHERE qty = -5)",
      false,
    ],
    [
      "in-tenants",
      "SELECT tenant_id, count(*) FROM events WHERE tenant_id IN (SELECT tenant_id FROM accounts WHERE ratio > 49) GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
  ],
  "replicated-pinned": [
    ["replicated-all", "SELECT code, label, price FROM plans ORDER BY code", true],
    [
      "replicated-aggregate",
      "SELECT sum(price), avg(price), string_agg(label, ';' ORDER BY code) FROM plans",
      false,
    ],
    ["pinned-all", "SELECT id, tenant_id, body, stars FROM notes ORDER BY id", true],
    ["pinned-group", "SELECT stars, count(*) FROM notes GROUP BY stars ORDER BY stars NULLS FIRST", true],
    ["pinned-text-order", "SELECT body, id FROM notes ORDER BY body, id LIMIT 20", true],
    [
      "pinned-join-replicated",
      "SELECT n.id, p.code FROM notes n JOIN plans p ON p.price > n.stars * 10 ORDER BY n.id, p.code LIMIT 40",
      true,
    ],
    [
      "pinned-join-partitioned",
      "SELECT n.id, count(a.id) FROM notes n JOIN accounts a ON a.tenant_id = n.tenant_id AND a.id = n.stars GROUP BY n.id ORDER BY n.id",
      true,
    ],
    [
      "partitioned-join-replicated",
      "SELECT p.code, count(*), sum(a.balance) FROM accounts a JOIN plans p ON p.code = a.plan GROUP BY p.code ORDER BY p.code",
      true,
    ],
    [
      "pinned-in-partitioned",
      "SELECT tenant_id, count(*) FROM accounts WHERE tenant_id IN (SELECT tenant_id FROM notes WHERE stars = 5) GROUP BY tenant_id ORDER BY tenant_id",
      true,
    ],
    [
      "pinned-window",
      "SELECT id, tenant_id, rank() OVER (PARTITION BY tenant_id ORDER BY stars DESC NULLS LAST, id) FROM notes ORDER BY id",
      true,
    ],
    [
      "replicated-union-pinned",
      "SELECT code AS word FROM plans UNION SELECT body FROM notes ORDER BY word",
      true,
    ],
  ],
  prepared: [
    ["param-key", "SELECT id, name, balance FROM accounts WHERE tenant_id = $1 ORDER BY id", true, ["東京"]],
    ["param-key-quote", "SELECT count(*), sum(amount) FROM events WHERE tenant_id = $1", false, ["o'neil"]],
    [
      "param-int-limit",
      "SELECT tenant_id, id, qty FROM events ORDER BY qty DESC NULLS LAST, tenant_id, id LIMIT $1",
      true,
      ["15"],
    ],
    [
      "param-limit-offset",
      "SELECT tenant_id, id, balance FROM accounts ORDER BY balance, tenant_id, id LIMIT $1 OFFSET $2",
      true,
      ["10", "25"],
    ],
    [
      "param-numeric-filter",
      "SELECT tenant_id, id, ratio FROM accounts WHERE ratio > $1 ORDER BY ratio, tenant_id, id",
      true,
      ["45.5"],
    ],
    [
      "param-text-typed",
      "SELECT $1::text AS echo, pg_typeof($1::text), count(*) FROM accounts WHERE city = $1",
      false,
      ["Zürich"],
    ],
    [
      "param-typeof",
      "SELECT pg_typeof($1::integer), $1::integer + 1 AS next, count(*) FROM events WHERE qty = $1",
      false,
      ["7"],
    ],
    ["param-null", "SELECT count(*) FROM accounts WHERE city IS NOT DISTINCT FROM $1::text", false, [null]],
    [
      "param-timestamp",
      "SELECT tenant_id, id, at FROM events WHERE at >= $1::timestamp ORDER BY at, tenant_id, id LIMIT 20",
      true,
      ["2026-03-27 00:00:00"],
    ],
    [
      "param-group-having",
      "SELECT kind, count(*) FROM events GROUP BY kind HAVING count(*) > $1 ORDER BY kind",
      true,
      ["320"],
    ],
    [
      "param-any-keys",
      "SELECT tenant_id, count(*) FROM accounts WHERE tenant_id = ANY ($1::text[]) GROUP BY tenant_id ORDER BY tenant_id",
      true,
      ["{acme,delta,東京}"],
    ],
    [
      "param-in-keys",
      "SELECT tenant_id, sum(qty) FROM events WHERE tenant_id IN ($1, $2) GROUP BY tenant_id ORDER BY tenant_id",
      true,
      ["zoë", "kilo"],
    ],
    [
      "param-uuid-order",
      "SELECT uid, tenant_id, id FROM accounts WHERE uid > $1::uuid ORDER BY uid LIMIT 12",
      true,
      ["80000000-0000-4000-a000-000000000000"],
    ],
    [
      "param-distinct-on",
      "SELECT DISTINCT ON (plan) plan, tenant_id, id FROM accounts WHERE balance > $1 ORDER BY plan, balance, tenant_id, id",
      true,
      ["100"],
    ],
    [
      "param-window",
      "SELECT tenant_id, id, rank() OVER (ORDER BY amount DESC) FROM events WHERE amount > $1 ORDER BY tenant_id, id",
      true,
      ["880"],
    ],
  ],
};

/** Every statement, family by family. */
export const STATEMENTS: readonly FidelityStatement[] = FAMILIES.flatMap((family) =>
  families[family].map(([name, sql, ordered, params]) =>
    params === undefined ? { family, name, sql, ordered } : { family, name, sql, ordered, params },
  ),
);
