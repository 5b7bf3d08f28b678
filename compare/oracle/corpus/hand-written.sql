-- Statements written by hand, not drawn by the generator: shapes a user writes without having
-- read the planner. Graded like generated ones (`--sql corpus/hand-written.sql`), in the grammar
-- world (README). One statement per paragraph; `-- int` runs it in the integer-keyed world,
-- `-- ordered` compares rows in order, `-- steps` runs each statement of a string as a step.
-- Every statement here must have one answer on one PostgreSQL (ORDER BY before LIMIT, no
-- aggregate that picks among equal values of a nondeterministic collation).

-- distributions: shared rows beside partitioned ones, joins, keys, aggregates, types

SELECT c.code, count(o.id) FROM currencies c LEFT JOIN orders o ON o.currency = c.code GROUP BY c.code

SELECT c.code, o.tenant_id, o.id FROM currencies c LEFT JOIN orders o ON o.currency = c.code AND o.total > 500

SELECT exists(SELECT 1 FROM orders WHERE total > 100)

SELECT NOT exists(SELECT 1 FROM orders WHERE tenant_id = 'zed')

SELECT v.k FROM (VALUES ('alice'), ('emma'), ('zed'), ('Kofi')) v(k) WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = v.k)

SELECT v.k FROM (VALUES ('alice'), ('emma'), ('zed'), ('Kofi')) v(k) WHERE EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = v.k)

SELECT v.k, count(u.id) FROM (VALUES ('alice'), ('emma'), ('zed')) v(k) LEFT JOIN users u ON u.tenant_id = v.k GROUP BY v.k

SELECT g, (SELECT count(*) FROM users WHERE age > g * 10) FROM generate_series(1, 5) g

SELECT code, (SELECT count(*) FROM orders WHERE currency = code) FROM currencies

SELECT c.code, x.n FROM currencies c, LATERAL (SELECT count(*) AS n FROM orders o WHERE o.currency = c.code) x

SELECT c.code FROM currencies c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.currency = c.code)

SELECT c.code FROM currencies c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.currency = c.code AND o.status = 'void')

SELECT c.code FROM currencies c WHERE c.code IN (SELECT currency FROM orders WHERE total > 300)

SELECT c.code FROM currencies c WHERE c.code NOT IN (SELECT currency FROM orders WHERE status = 'paid')

SELECT count(*) FROM currencies

SELECT count(*) FROM currencies CROSS JOIN users

SELECT code FROM currencies UNION ALL SELECT currency FROM orders WHERE tenant_id = 'alice'

SELECT code FROM currencies UNION SELECT currency FROM orders

SELECT currency FROM orders INTERSECT SELECT code FROM currencies

SELECT code FROM currencies EXCEPT SELECT currency FROM orders WHERE status = 'open'

SELECT code FROM currencies EXCEPT ALL SELECT currency FROM orders

SELECT 1 WHERE EXISTS (SELECT 1 FROM users WHERE age > 60)

SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM orders)

SELECT count(*) FROM generate_series(1, 100) g WHERE g > (SELECT count(*) FROM users)

VALUES ((SELECT count(*) FROM users)), ((SELECT max(id) FROM orders))

SELECT * FROM (VALUES ('alice'), ('emma'), ('zed')) v(k) LEFT JOIN users u ON u.tenant_id = v.k

SELECT c.code, o.tenant_id, o.id FROM currencies c FULL JOIN orders o ON o.currency = c.code AND o.total > 800

SELECT c.code, o.id FROM orders o RIGHT JOIN currencies c ON o.currency = c.code AND o.status = 'void'

SELECT tenant_id, id, row_number() OVER (ORDER BY tenant_id, id) FROM users

SELECT country, count(*) OVER (PARTITION BY country) FROM users

SELECT tenant_id, id, rank() OVER (ORDER BY age DESC NULLS LAST) FROM users

SELECT tenant_id, id, lag(id) OVER (ORDER BY tenant_id, id) FROM orders

SELECT tenant_id, id, ntile(3) OVER (ORDER BY tenant_id, id) FROM orders

SELECT tenant_id, id, percent_rank() OVER (ORDER BY total, tenant_id, id) FROM orders

SELECT tenant_id, first_value(id) OVER (PARTITION BY tenant_id ORDER BY id) FROM orders

SELECT status, sum(total) OVER (PARTITION BY status) FROM orders

-- ordered
SELECT tenant_id, id, age FROM users ORDER BY age DESC NULLS LAST, tenant_id, id LIMIT 3 OFFSET 2

SELECT tenant_id, id, age FROM users ORDER BY age FETCH FIRST 2 ROWS WITH TIES

SELECT max(name COLLATE "C"), min(name) FROM users

-- ordered
SELECT name, tenant_id, id FROM users ORDER BY name COLLATE "C", tenant_id, id

-- ordered
SELECT name, tenant_id, id FROM users ORDER BY name, tenant_id, id

SELECT DISTINCT lower(name) FROM users

SELECT count(DISTINCT name COLLATE ci) FROM users

SELECT count(*) FROM users WHERE tenant_id = 'frank' COLLATE ci

SELECT count(*) FROM users WHERE tenant_id = 'FRANK' COLLATE ci

SELECT count(*) FROM users WHERE tenant_id = 'alice' AND tenant_id = 'alice'::varchar

SELECT count(*) FROM users WHERE tenant_id = ANY('{alice,emma}')

SELECT count(*) FROM users WHERE tenant_id LIKE 'e%'

SELECT count(*) FROM users WHERE tenant_id BETWEEN 'd' AND 'g'

SELECT count(*) FROM users WHERE upper(tenant_id) = 'EMMA'

SELECT count(*) FROM users WHERE tenant_id::varchar(3) = 'emm'

SELECT count(*) FROM users WHERE tenant_id = 'emma '

SELECT count(*) FROM users WHERE tenant_id = 'emma'::char(6)

SELECT count(*) FROM users WHERE tenant_id::char(6) = 'emma'

SELECT count(*) FROM users WHERE tenant_id = 'emma' OR id = 1

SELECT count(*) FROM users WHERE NOT (tenant_id <> 'emma')

SELECT count(*) FROM users WHERE tenant_id IS NOT DISTINCT FROM 'emma'

SELECT count(*) FROM users WHERE (tenant_id, id) = ('emma', 1)

SELECT count(*) FROM users WHERE (tenant_id, id) IN (('emma', 1), ('ivan', 2))

SELECT count(*) FROM users WHERE tenant_id = (SELECT 'emma')

SELECT count(*) FROM users WHERE tenant_id = (SELECT min(tenant_id) FROM users WHERE tenant_id > 'd')

SELECT count(*) FROM users WHERE tenant_id IN (SELECT tenant_id FROM orders WHERE total > 900)

SELECT count(*) FROM users WHERE tenant_id = CASE WHEN id > 0 THEN 'emma' ELSE 'alice' END

SELECT count(*) FROM users WHERE tenant_id = coalesce(NULL, 'emma')

SELECT count(*) FROM users WHERE tenant_id = 'em' || 'ma'

SELECT count(*) FROM users WHERE tenant_id = E'o\'neil'

SELECT count(*) FROM users WHERE tenant_id = U&'emm\0061'

SELECT count(*) FROM users WHERE tenant_id = $$emma$$

SELECT count(*) FROM users WHERE tenant_id = 'emma' COLLATE "C"

SELECT count(*) FROM users WHERE tenant_id = 'EMMA' COLLATE "und-x-icu"

SELECT count(*) FROM users WHERE tenant_id ILIKE 'EMMA'

SELECT count(*) FROM users WHERE tenant_id ~ '^em'

SELECT count(*) FROM users WHERE tenant_id = 'emma' AND tenant_id = 'Emma'

SELECT count(*) FROM users WHERE tenant_id IN ('emma') AND tenant_id NOT IN ('emma')

SELECT count(*) FROM users WHERE tenant_id > 'zz' OR tenant_id = 'emma'

SELECT count(*) FROM users WHERE tenant_id = ANY(ARRAY['emma', NULL])

SELECT count(*) FROM users WHERE NOT (tenant_id = ANY(ARRAY['emma', NULL]))

SELECT count(*) FROM users WHERE tenant_id = ALL(ARRAY['emma'])

SELECT count(*) FROM users WHERE tenant_id = ALL(ARRAY['emma', 'emma'])

SELECT count(*) FROM users WHERE tenant_id = ALL('{}'::text[])

SELECT count(*) FROM users WHERE tenant_id = SOME(SELECT unnest(ARRAY['emma', 'ivan']))

SELECT count(*) FROM users WHERE tenant_id IS NULL

SELECT count(*) FROM users WHERE tenant_id = NULL

SELECT count(*) FROM users WHERE tenant_id IN (NULL, 'emma')

SELECT count(*) FROM users WHERE tenant_id NOT IN (NULL, 'emma')

SELECT * FROM users WHERE id = (SELECT max(id) FROM users)

SELECT tenant_id, id FROM users WHERE age > (SELECT avg(age) FROM users)

SELECT tenant_id FROM users WHERE id IN (SELECT user_id FROM orders WHERE total > 100)

SELECT tenant_id, id FROM users WHERE id NOT IN (SELECT buyer FROM orders)

SELECT count(*) FROM (SELECT DISTINCT country FROM users) s

SELECT country, count(*) FROM users GROUP BY country HAVING count(*) > 1 ORDER BY 2 DESC, 1 LIMIT 2

SELECT DISTINCT ON (country) country, name FROM users ORDER BY country, age DESC NULLS LAST, tenant_id, id

SELECT sum(total) FILTER (WHERE status = 'paid'), count(*) FILTER (WHERE status <> 'paid') FROM orders

SELECT array_agg(DISTINCT country ORDER BY country) FROM users

SELECT tenant_id, id, (SELECT count(*) FROM orders o WHERE o.user_id = u.id) FROM users u

SELECT tenant_id, id, (SELECT count(*) FROM orders o WHERE o.user_id = u.id AND o.tenant_id = u.tenant_id) FROM users u

SELECT variance(total), stddev(total), var_pop(total), stddev_pop(total) FROM orders

SELECT variance(age), stddev(age) FROM users

SELECT status, variance(total) FROM orders GROUP BY status

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders

SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY age) FROM users

SELECT mode() WITHIN GROUP (ORDER BY status) FROM orders

SELECT json_agg(id ORDER BY tenant_id, id) FROM users

SELECT jsonb_agg(DISTINCT status) FROM orders

SELECT jsonb_object_agg(tenant_id || id, total) FROM orders

SELECT string_agg(name, ',' ORDER BY name, tenant_id, id) FROM users

SELECT bit_xor(id), bit_and(id), bit_or(id) FROM users

SELECT every(active), bool_and(active), bool_or(NOT active) FROM users

SELECT avg(DISTINCT age), sum(DISTINCT age), count(DISTINCT age) FROM users

SELECT min(created_at) IS NOT NULL, max(id), count(last_seen) FROM users

SELECT round(regr_slope(age, id)::numeric, 6), round(corr(age, id)::numeric, 6) FROM users

SELECT array_agg(age ORDER BY age NULLS FIRST, tenant_id, id) FROM users

SELECT country, active, count(*) FROM users GROUP BY ROLLUP (country, active)

SELECT country, grouping(country), count(*) FROM users GROUP BY GROUPING SETS ((country), ())

SELECT status, currency, count(*) FROM orders GROUP BY CUBE (status, currency)

SELECT country, count(*) FROM users GROUP BY 1 ORDER BY count(*) DESC, country LIMIT 3

SELECT status, count(*) FROM orders GROUP BY status HAVING count(*) > (SELECT count(*) / 10 FROM orders)

WITH t AS (SELECT country, count(*) c FROM users GROUP BY country) SELECT max(c) FROM t

WITH t AS (SELECT * FROM users ORDER BY age NULLS LAST, tenant_id, id LIMIT 5) SELECT count(*), sum(age) FROM t

WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT count(*) FROM users)) SELECT max(n) FROM r

WITH RECURSIVE w(tid, uid, depth) AS (SELECT tenant_id, id, 0 FROM users WHERE tenant_id = 'alice' AND id = 1 UNION SELECT o.tenant_id, o.buyer, w.depth + 1 FROM w JOIN orders o ON o.user_id = w.uid WHERE w.depth < 3 AND o.buyer IS NOT NULL) SELECT count(*) FROM w

SELECT count(*) FROM users u JOIN orders o ON o.user_id = u.id

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id = CASE u.tenant_id WHEN 'alice' THEN 'emma' ELSE u.tenant_id END

SELECT count(*) FROM (SELECT 'alice'::text AS tenant_id FROM users) a JOIN orders o USING (tenant_id)

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id = u.name

SELECT count(*) FROM users u JOIN orders o ON (o.tenant_id, o.user_id) = (u.tenant_id, u.id)

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id = u.tenant_id OR o.user_id = u.id

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id <> u.tenant_id

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id IS NOT DISTINCT FROM u.tenant_id

SELECT count(*) FROM users a JOIN users b ON a.name = b.name AND a.tenant_id < b.tenant_id

SELECT count(*) FROM (SELECT tenant_id AS x FROM users) a JOIN (SELECT tenant_id AS x FROM orders) b USING (x)

SELECT count(*) FROM users u NATURAL JOIN orders o

SELECT count(*) FROM users u, orders o WHERE o.tenant_id = u.tenant_id AND o.user_id = u.id

SELECT count(*) FROM users u, orders o WHERE o.tenant_id > u.tenant_id

SELECT u.tenant_id, s.c FROM users u JOIN (SELECT status, count(*) c FROM orders GROUP BY status) s ON true WHERE u.id = 1

SELECT count(*) FROM users u LEFT JOIN LATERAL (SELECT * FROM orders o WHERE o.user_id = u.id LIMIT 1) x ON true

SELECT u.tenant_id, u.id, x.total FROM users u LEFT JOIN LATERAL (SELECT total FROM orders o WHERE o.tenant_id = u.tenant_id AND o.user_id = u.id ORDER BY total DESC LIMIT 1) x ON true

SELECT * FROM (SELECT tenant_id, id, total FROM orders ORDER BY total DESC, tenant_id, id LIMIT 3) s

SELECT unnest(ARRAY[1, 2]), tenant_id FROM users WHERE id = 1

SELECT generate_series(1, 2) AS g, count(*) FROM users GROUP BY g

SELECT count(*) FROM users, generate_series(1, 3)

SELECT tenant_id, row(id, name) FROM users ORDER BY name, tenant_id, id

SELECT u FROM users u WHERE id = 1 ORDER BY u.name, u.tenant_id

SELECT count(*), u.country FROM users u GROUP BY u.country ORDER BY u.country NULLS FIRST

SELECT sum(age)::text, avg(age)::text, avg(total) FROM users JOIN orders USING (tenant_id)

SELECT avg(total), sum(total), avg(age::numeric) FROM orders, users WHERE users.tenant_id = orders.tenant_id AND users.id = orders.user_id

SELECT max(last_seen) - min(last_seen) FROM users

SELECT date_trunc('day', max(created_at)) = date_trunc('day', min(created_at)) FROM orders

SELECT count(*) FROM badges WHERE bits = B'1010'

SELECT bits, count(*) FROM badges GROUP BY bits

SELECT grade, count(*) FROM badges GROUP BY grade

SELECT tags, count(*) FROM badges GROUP BY tags

SELECT price, count(*) FROM badges GROUP BY price

SELECT (price).cur, sum((price).amount) FROM badges GROUP BY 1

SELECT max(bits), min(grade), max(tags) FROM badges

SELECT DISTINCT price FROM badges

SELECT array_agg(price ORDER BY price, tenant_id, id) FROM badges

SELECT round(avg(weight)::numeric, 4), round(sum(weight)::numeric, 3) FROM badges

SELECT tenant_id, id, bits FROM badges ORDER BY bits, tenant_id, id LIMIT 4

SELECT tenant_id, id, tags FROM badges ORDER BY tags, tenant_id, id LIMIT 4

SELECT tenant_id, id, price FROM badges ORDER BY price NULLS FIRST, tenant_id, id LIMIT 4

-- integer keys, correlated and uncorrelated sub-queries, set operations, limits

-- int
SELECT count(*) FROM accounts WHERE acct = 5.0

-- int
SELECT count(*) FROM accounts WHERE acct = '05'

-- int
SELECT count(*) FROM accounts WHERE acct = 5 AND acct = 5.0

-- int
SELECT count(*) FROM accounts WHERE acct = 4.9999999999999999999

-- int
SELECT count(*) FROM accounts WHERE acct = 5::real

-- int
SELECT count(*) FROM accounts WHERE acct = '5'::float8

-- int
SELECT count(*) FROM accounts WHERE acct = 5e0

-- int
SELECT count(*) FROM accounts WHERE acct IN (5, 7.0, '8')

-- int
SELECT count(*) FROM accounts WHERE acct::text = '5'

-- int
SELECT count(*) FROM accounts WHERE acct = 5.5

-- int
SELECT count(*) FROM accounts WHERE acct = -(-5)

-- int
SELECT count(*) FROM accounts WHERE acct = 10 - 5

-- int
SELECT count(*) FROM accounts WHERE acct = 0x5

-- int
SELECT count(*) FROM accounts WHERE acct = 5::bigint AND acct = '+5'

-- int
SELECT count(*) FROM accounts WHERE acct = ' 5 '

-- int
SELECT count(*) FROM accounts WHERE acct = 5::numeric(3,1)

-- int
SELECT count(*) FROM accounts WHERE acct % 3 = 1

-- int
SELECT count(*) FROM accounts WHERE acct BETWEEN 4 AND 6

-- int
SELECT count(*) FROM accounts WHERE acct IN (SELECT acct FROM moves WHERE amount > 10)

-- int
SELECT acct, sum(balance) FROM accounts GROUP BY acct ORDER BY 2 DESC, 1 LIMIT 3

-- int
SELECT count(*) FROM accounts a JOIN moves m ON m.acct = a.acct + 1

-- int
SELECT count(*) FROM accounts a JOIN moves m ON m.acct::numeric = a.acct

-- int
SELECT count(*) FROM accounts a JOIN moves m ON m.acct = a.id

-- int
SELECT kind, sum(amount), avg(amount), count(*) FROM moves GROUP BY kind

-- int
SELECT owner, count(*) FROM accounts GROUP BY owner COLLATE ci

SELECT count(*) FROM users WHERE country = ANY (SELECT country FROM users WHERE tenant_id = 'emma')

SELECT tenant_id, id FROM users u WHERE age = (SELECT max(age) FROM users u2 WHERE u2.country = u.country)

SELECT tenant_id, id FROM users u WHERE age = (SELECT max(age) FROM users u2 WHERE u2.tenant_id = u.tenant_id)

SELECT (SELECT max(total) FROM orders o WHERE o.tenant_id = u.tenant_id) AS m, count(*) FROM users u GROUP BY 1

SELECT count(*) FROM users GROUP BY (SELECT 1)

SELECT (SELECT count(*) FROM currencies) AS n, count(*) FROM users GROUP BY n

SELECT status, count(*) OVER (), count(*) FROM orders GROUP BY status

SELECT status, sum(count(*)) OVER (ORDER BY status) FROM orders GROUP BY status

SELECT tenant_id, count(*), rank() OVER (ORDER BY count(*) DESC, tenant_id) FROM orders GROUP BY tenant_id

SELECT tenant_id, id, count(*) OVER () FROM orders ORDER BY tenant_id, id LIMIT 3

SELECT DISTINCT status FROM orders ORDER BY status LIMIT 2

SELECT DISTINCT country FROM users ORDER BY country NULLS FIRST LIMIT 2 OFFSET 1

(SELECT tenant_id, id FROM users ORDER BY tenant_id, id LIMIT 2) UNION ALL (SELECT tenant_id, id FROM orders ORDER BY tenant_id DESC, id DESC LIMIT 2)

SELECT tenant_id FROM users UNION SELECT tenant_id FROM orders ORDER BY 1 LIMIT 4

SELECT count(*) FROM (SELECT tenant_id FROM users INTERSECT SELECT tenant_id FROM orders) s

SELECT count(*) FROM (SELECT name FROM users EXCEPT SELECT name FROM users WHERE tenant_id = 'alice') s

SELECT count(*) FROM (SELECT name FROM users WHERE tenant_id = 'emma' INTERSECT SELECT name FROM users WHERE tenant_id = 'alice') s

WITH s AS (SELECT tenant_id FROM users UNION ALL SELECT tenant_id FROM orders) SELECT tenant_id, count(*) FROM s GROUP BY tenant_id

WITH s AS (SELECT country FROM users UNION SELECT currency FROM orders) SELECT count(*) FROM s

SELECT count(*) FROM users WHERE name IN (SELECT name FROM users GROUP BY name HAVING count(*) > 1)

SELECT tenant_id, id FROM orders WHERE (tenant_id, total) IN (SELECT tenant_id, max(total) FROM orders GROUP BY tenant_id)

SELECT tenant_id, id FROM orders WHERE (currency, total) IN (SELECT currency, max(total) FROM orders GROUP BY currency)

SELECT o.tenant_id, o.id FROM orders o WHERE o.total > ALL (SELECT total FROM orders WHERE status = 'void')

SELECT o.tenant_id, o.id FROM orders o WHERE o.total >= ANY (SELECT max(total) FROM orders)

SELECT count(*) FROM orders o WHERE EXISTS (SELECT 1 FROM orders p WHERE p.buyer = o.user_id)

SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = o.buyer)

SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = o.buyer AND u.tenant_id = o.tenant_id)

SELECT count(*) FROM users u WHERE EXISTS (SELECT 1 FROM currencies c WHERE c.code = u.country)

SELECT count(*) FROM users u WHERE u.country IN (SELECT code FROM currencies)

SELECT count(*) FROM eu_audit a JOIN users u ON u.tenant_id = a.tenant_id

SELECT count(*) FROM eu_audit a WHERE a.tenant_id IN (SELECT tenant_id FROM users)

SELECT count(*) FROM users u WHERE u.tenant_id IN (SELECT tenant_id FROM eu_audit)

SELECT a.action, count(*) FROM eu_audit a LEFT JOIN orders o ON o.tenant_id = a.tenant_id GROUP BY a.action

SELECT count(*) FROM fx_rates f JOIN currencies c ON c.code = f.base

SELECT count(*) FROM fx_rates f LEFT JOIN orders o ON o.currency = f.quote

SELECT f.base, f.quote, (SELECT sum(total) FROM orders WHERE currency = f.base) FROM fx_rates f

SELECT tenant_id, id FROM users ORDER BY tenant_id USING >, id USING < LIMIT 3

SELECT tenant_id, id FROM users ORDER BY tenant_id DESC, id LIMIT 3

SELECT tenant_id, id, name FROM users ORDER BY name DESC NULLS LAST, tenant_id, id LIMIT 5

SELECT tenant_id, id, name FROM users ORDER BY lower(name), tenant_id, id LIMIT 5

SELECT tenant_id, id, name FROM users ORDER BY name COLLATE ci, tenant_id, id LIMIT 5

SELECT tenant_id, id, last_seen FROM users ORDER BY last_seen DESC NULLS FIRST, tenant_id, id LIMIT 4

SELECT tenant_id, total FROM orders ORDER BY total::text, tenant_id, id LIMIT 4

SELECT count(*) FROM users FOR UPDATE

SELECT tenant_id, id FROM users WHERE age > 50 FOR UPDATE

SELECT tenant_id, id FROM users WHERE age > 50 FOR SHARE SKIP LOCKED

SELECT tenant_id, id FROM users ORDER BY tenant_id, id LIMIT 2 FOR UPDATE

SELECT count(*) FROM (SELECT * FROM users LIMIT 3) s

SELECT count(*) FROM (SELECT * FROM users OFFSET 3) s

SELECT count(*) FROM users LIMIT 0

SELECT count(*) FROM users OFFSET 1

SELECT 1 FROM users LIMIT 1

SELECT tenant_id, id FROM users LIMIT 5 OFFSET -1

SELECT tenant_id, id FROM users ORDER BY 1, 2 LIMIT -1

SELECT tenant_id, id FROM users ORDER BY 1, 2 LIMIT NULL OFFSET NULL

SELECT tenant_id, id FROM users ORDER BY 1, 2 LIMIT 2 + 1 OFFSET 1 * 2

SELECT tenant_id, id FROM users ORDER BY 1, 2 LIMIT (SELECT count(*) FROM currencies)

SELECT tenant_id, id FROM users ORDER BY 1, 2 FETCH FIRST (SELECT 2) ROWS WITH TIES

SELECT tenant_id, id FROM users ORDER BY 1, 2 LIMIT 9223372036854775807 OFFSET 9223372036854775807

SELECT sum(total), avg(age) FROM orders JOIN users ON users.tenant_id = orders.tenant_id AND users.id = orders.user_id GROUP BY users.country

SELECT count(*) FROM users WHERE last_seen > now() - interval '100 years'

SELECT to_char(sum(total), 'FM999999.00') FROM orders

SELECT sum(total)::int, sum(age)::numeric / 3, avg(age)::float8 FROM users JOIN orders USING (tenant_id)

SELECT json_build_object('n', count(*), 's', sum(total)) FROM orders

SELECT row_to_json(u) FROM users u WHERE id = 1 ORDER BY u.tenant_id

SELECT to_jsonb(o) - 'created_at' FROM orders o WHERE total > 900

SELECT count(*) FROM users u WHERE u IS NOT NULL

SELECT count(*) FROM users u WHERE row(u.tenant_id, u.id) > row('emma', 1)

SELECT max(row(tenant_id, id)::text) FROM users

SELECT tenant_id, id, total FROM orders WHERE total = (SELECT max(total) FROM orders o2 WHERE o2.status = orders.status)

SELECT status, (array_agg(total ORDER BY total DESC, tenant_id, id))[1] FROM orders GROUP BY status

SELECT status, count(*) FROM orders WHERE tenant_id IN ('alice', 'emma', 'ivan') GROUP BY status

SELECT status, count(*) FROM orders WHERE tenant_id IN ('alice', 'Bob') GROUP BY status

SELECT tenant_id, count(*) FROM orders GROUP BY tenant_id HAVING tenant_id > 'f'

SELECT * FROM (SELECT tenant_id, count(*) AS n FROM orders GROUP BY tenant_id) s WHERE n > 2 ORDER BY n, tenant_id

SELECT n, count(*) FROM (SELECT tenant_id, count(*) AS n FROM orders GROUP BY tenant_id) s GROUP BY n

SELECT count(*) FROM (SELECT user_id, count(*) FROM orders GROUP BY user_id) s

SELECT max(n) FROM (SELECT user_id, count(*) AS n FROM orders GROUP BY user_id) s

SELECT count(*) FROM (SELECT DISTINCT ON (tenant_id) tenant_id, id FROM orders ORDER BY tenant_id, total DESC, id) s

SELECT count(*) FROM (SELECT DISTINCT ON (status) status, tenant_id FROM orders ORDER BY status, tenant_id, id) s

-- writes inside rolled-back blocks, session settings, collations, ranges, arrays, composites

-- steps
BEGIN; UPDATE users SET age = age + 1 WHERE id = (SELECT max(id) FROM users) RETURNING tenant_id, id, age; ROLLBACK

-- steps
BEGIN; DELETE FROM orders WHERE total > (SELECT avg(total) FROM orders) RETURNING tenant_id, id; ROLLBACK

-- steps
BEGIN; UPDATE orders o SET total = total + 1 FROM currencies c WHERE c.code = o.currency AND c.digits = 2 RETURNING o.tenant_id, o.id, o.total; ROLLBACK

-- steps
BEGIN; UPDATE currencies SET digits = digits + 1 RETURNING code, digits; ROLLBACK

-- steps
BEGIN; INSERT INTO currencies VALUES ('XYZ', 'x', 2) RETURNING *; ROLLBACK

-- steps
BEGIN; UPDATE users SET name = (SELECT name FROM users WHERE tenant_id = 'emma' AND id = 1) WHERE tenant_id = 'alice' AND id = 1 RETURNING name; ROLLBACK

-- steps
BEGIN; UPDATE users SET age = (SELECT count(*) FROM orders) WHERE tenant_id = 'alice' RETURNING tenant_id, id, age; ROLLBACK

-- steps
BEGIN; UPDATE orders o SET total = s.m FROM (SELECT tenant_id, max(total) AS m FROM orders GROUP BY tenant_id) s WHERE s.tenant_id = o.tenant_id RETURNING o.tenant_id, o.id, o.total; ROLLBACK

-- steps
BEGIN; UPDATE orders o SET total = s.m FROM (SELECT status, max(total) AS m FROM orders GROUP BY status) s WHERE s.status = o.status RETURNING o.tenant_id, o.id, o.total; ROLLBACK

-- steps
BEGIN; DELETE FROM orders o USING users u WHERE u.tenant_id = o.tenant_id AND u.id = o.user_id AND u.age > 40 RETURNING o.tenant_id, o.id; ROLLBACK

-- steps
BEGIN; DELETE FROM orders o USING users u WHERE u.id = o.buyer AND u.age > 40 RETURNING o.tenant_id, o.id; ROLLBACK

-- steps
BEGIN; INSERT INTO orders (tenant_id, id, user_id, currency, total) SELECT tenant_id, id + 1000, user_id, currency, total FROM orders WHERE total > 500 RETURNING tenant_id, id; ROLLBACK

-- steps
BEGIN; INSERT INTO orders (tenant_id, id, user_id, currency, total) SELECT 'emma', id + 1000, 1, currency, total FROM orders WHERE tenant_id = 'alice' AND id < 3 RETURNING tenant_id, id; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('alice', 900, 'a'), ('emma', 900, 'e'), ('zed', 900, 'z') RETURNING tenant_id, id; SELECT tenant_id, count(*) FROM users WHERE id = 900 GROUP BY 1; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('alice', 1, 'dup') ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name RETURNING tenant_id, id, name; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('alice', 1, 'dup'), ('emma', 1, 'dup') ON CONFLICT DO NOTHING RETURNING tenant_id; ROLLBACK

-- steps
BEGIN; UPDATE users SET tenant_id = 'emma' WHERE tenant_id = 'alice' AND id = 1 RETURNING tenant_id; ROLLBACK

-- steps
BEGIN; UPDATE fx_rates SET rate = rate * 2 WHERE base = 'EUR' RETURNING base, quote; ROLLBACK

-- steps
BEGIN; DELETE FROM fx_rates WHERE base IN (SELECT currency FROM orders WHERE total > 900) RETURNING base, quote; ROLLBACK

-- steps
BEGIN; UPDATE currencies SET digits = 3 WHERE code IN (SELECT currency FROM orders WHERE tenant_id = 'emma') RETURNING code; ROLLBACK

-- steps
BEGIN; UPDATE users SET age = 1 WHERE tenant_id IN (SELECT tenant_id FROM eu_audit) RETURNING tenant_id, id; ROLLBACK

-- steps
BEGIN; WITH d AS (DELETE FROM orders WHERE status = 'void' RETURNING tenant_id, total) SELECT tenant_id, sum(total) FROM d GROUP BY 1; ROLLBACK

-- steps
BEGIN; WITH u AS (UPDATE users SET age = age + 1 WHERE tenant_id = 'alice' RETURNING id) SELECT count(*) FROM u; ROLLBACK

-- steps
BEGIN; UPDATE users SET age = age + 1 WHERE age IS NOT NULL; SELECT sum(age) FROM users; ROLLBACK

-- steps
BEGIN; UPDATE users SET age = age + 1; SELECT sum(age) FROM users; ROLLBACK; SELECT sum(age) FROM users

-- steps
BEGIN; SELECT count(*) FROM users; UPDATE users SET age = 0 WHERE tenant_id = 'emma'; SELECT count(*) FROM users WHERE age = 0; ROLLBACK

-- steps
BEGIN; DELETE FROM users WHERE tenant_id = 'zed'; SELECT 1; COMMIT

-- steps
BEGIN; SAVEPOINT a; UPDATE users SET age = 5 WHERE tenant_id = 'emma'; ROLLBACK TO a; SELECT count(*) FROM users WHERE age = 5; ROLLBACK

-- steps
BEGIN; UPDATE users SET age = 5 WHERE tenant_id = 'emma'; SAVEPOINT a; UPDATE users SET age = 6 WHERE tenant_id = 'alice'; ROLLBACK TO a; SELECT tenant_id, count(*) FROM users WHERE age IN (5, 6) GROUP BY 1; ROLLBACK

SET search_path = public; SELECT count(*) FROM users; RESET search_path

SET TimeZone = 'Asia/Tokyo'; SELECT max(last_seen)::text, min(created_at)::text FROM users; RESET TimeZone

SET TimeZone = 'America/New_York'; SELECT tenant_id, id, last_seen FROM users ORDER BY last_seen NULLS LAST, tenant_id, id LIMIT 3; RESET TimeZone

SET DateStyle = 'SQL, DMY'; SELECT max(last_seen) FROM users; RESET DateStyle

SET extra_float_digits = 0; SELECT avg(weight), sum(weight) FROM badges; RESET extra_float_digits

SET intervalstyle = 'iso_8601'; SELECT max(last_seen) - min(last_seen) FROM users; RESET intervalstyle

SET bytea_output = 'escape'; SELECT max(convert_to(name, 'UTF8')) FROM users; RESET bytea_output

SET lc_monetary = 'C'; SELECT sum(total::money) FROM orders; RESET lc_monetary

SET enable_hashagg = off; SELECT country, count(*) FROM users GROUP BY country; RESET enable_hashagg

SET statement_timeout = '5s'; SELECT count(*) FROM orders; RESET statement_timeout

SELECT current_setting('TimeZone') = current_setting('TimeZone'), count(*) FROM users

SELECT count(*) FROM users WHERE created_at < now()

SELECT count(*) FROM users WHERE last_seen < CURRENT_TIMESTAMP

SELECT tenant_id, id FROM users WHERE name SIMILAR TO '(a|b)%'

SELECT count(*) FROM users WHERE name ~* '^A'

SELECT tenant_id, id FROM users WHERE name COLLATE "C" < 'b'

SELECT tenant_id, id FROM users WHERE name < 'b' COLLATE "C"

SELECT min(name COLLATE "C") FROM users GROUP BY country COLLATE "C"

SELECT country COLLATE "C", count(*) FROM users GROUP BY 1 ORDER BY 1 NULLS FIRST

SELECT count(*) FROM users u JOIN orders o ON o.tenant_id = u.tenant_id COLLATE "C"

SELECT tenant_id, id, name FROM users WHERE name COLLATE ci = 'ANN'

SELECT string_agg(DISTINCT name, ',' ORDER BY name) FROM users

SELECT array_agg(DISTINCT name COLLATE "C" ORDER BY name COLLATE "C") FROM users

SELECT max(name) FILTER (WHERE active), min(name) FILTER (WHERE NOT active) FROM users

SELECT count(*) FILTER (WHERE name > 'b' COLLATE "C") FROM users

SELECT int4range(min(age), max(age)) FROM users

SELECT range_agg(int4range(id::int, id::int + 1)) FROM users WHERE tenant_id IN ('alice', 'emma')

SELECT count(*) FROM users WHERE int4range(1, 40) @> age

SELECT numrange(min(total), max(total), '[]') FROM orders

SELECT array_agg(tags ORDER BY tenant_id, id) FROM badges

SELECT unnest(tags) AS t, count(*) FROM badges GROUP BY t

SELECT max(array_length(tags, 1)), min(cardinality(tags)) FROM badges

SELECT tenant_id, id FROM badges WHERE 'red' = ANY(tags) ORDER BY 1, 2

SELECT bits & B'1100', count(*) FROM badges GROUP BY 1

SELECT bit_and(bits), bit_or(bits) FROM badges

SELECT (price).amount, count(*) FROM badges GROUP BY (price).amount ORDER BY 1 NULLS FIRST

SELECT grade, string_agg(tenant_id, ',' ORDER BY tenant_id, id) FROM badges GROUP BY grade

SELECT count(*) FROM badges WHERE grade > 'b'

SELECT tenant_id, id FROM badges WHERE price = ROW(10.00, 'EUR')::price_t

SELECT max(weight), min(weight), round(sum(weight::numeric), 2) FROM badges

SELECT weight, count(*) FROM badges GROUP BY weight


-- key spellings through casts, functions and sub-queries; integer keys through floats and text

SELECT id FROM users WHERE tenant_id::varchar(3) = 'ali'

SELECT id FROM users WHERE tenant_id::char(10) = 'alice   '

SELECT id FROM users WHERE tenant_id = 'alice   '::char(8)

SELECT id FROM users WHERE tenant_id = 'alice'::char(8)

SELECT id FROM users WHERE tenant_id = 'aliceXYZ'::varchar(5)

SELECT id FROM users WHERE tenant_id = substr('xalice', 2)

SELECT id FROM users WHERE tenant_id = 'ali' || 'ce'

SELECT id FROM users WHERE tenant_id = lower('EMMA')

SELECT id FROM users WHERE tenant_id = E'ali\x63e'

SELECT id FROM users WHERE tenant_id = U&'ali\0063e'

SELECT id FROM users WHERE tenant_id = $$emma$$

SELECT id FROM users WHERE tenant_id IN (SELECT 'emma')

SELECT id FROM users WHERE tenant_id = (SELECT 'emma')

SELECT id FROM users WHERE tenant_id IS NOT DISTINCT FROM 'emma'

SELECT id FROM users WHERE (tenant_id, id) = ('emma', 1)

SELECT id FROM users WHERE (tenant_id, id) IN (('emma', 1), ('ivan', 2))

SELECT id FROM users WHERE tenant_id = ANY('{emma,ivan}')

SELECT id FROM users WHERE tenant_id = ANY('{emma,ivan}'::text[])

SELECT id FROM users WHERE tenant_id = ALL('{emma}'::text[])

SELECT id FROM users WHERE tenant_id = ALL('{emma,ivan}'::text[])

SELECT id FROM users WHERE tenant_id BETWEEN 'emma' AND 'emma'

SELECT id FROM users WHERE NOT (tenant_id <> 'emma')

SELECT id FROM users WHERE coalesce(tenant_id, 'x') = 'emma'

SELECT id FROM users WHERE tenant_id = 'emma' OR id > 3

SELECT id FROM users WHERE CASE WHEN tenant_id = 'emma' THEN true ELSE false END

SELECT id FROM users WHERE tenant_id = 'emma' IS TRUE

SELECT id FROM users WHERE (tenant_id = 'emma') = false

SELECT id FROM users WHERE tenant_id = 'emma' AND tenant_id = 'ivan'

SELECT id FROM users WHERE tenant_id = 'emma' AND NOT tenant_id = 'emma'

SELECT id FROM users WHERE tenant_id ~ '^emma$'

SELECT id FROM users WHERE tenant_id LIKE 'emma'

SELECT id FROM users WHERE tenant_id ILIKE 'EMMA'

SELECT id FROM users WHERE tenant_id SIMILAR TO 'emma'

SELECT id FROM users WHERE tenant_id = 'EMMA' COLLATE ci

SELECT id FROM users WHERE tenant_id COLLATE "C" = 'emma'

SELECT id FROM users WHERE tenant_id >= 'emma' AND tenant_id <= 'emma'

SELECT id FROM users WHERE tenant_id IN ('emma') AND tenant_id NOT IN ('emma')

SELECT id FROM users WHERE tenant_id = 'emma'::name

SELECT id FROM users WHERE tenant_id::name = 'emma'

SELECT id FROM users WHERE tenant_id = ('emma' || repeat(' ', 0))

SELECT id FROM users WHERE tenant_id = trim('  emma  ')

SELECT id FROM users WHERE tenant_id = (ARRAY['emma','ivan'])[2]

SELECT id FROM users WHERE tenant_id = ('{"t":"emma"}'::json)->>'t'

SELECT id FROM users u WHERE u.tenant_id = 'emma' AND u.tenant_id = u.tenant_id

SELECT id FROM users WHERE tenant_id IN ('emma', NULL)

SELECT id FROM users WHERE tenant_id NOT IN ('emma', NULL)

SELECT id FROM users WHERE tenant_id = NULL

SELECT id FROM users WHERE tenant_id IS NULL

SELECT id FROM users WHERE 'emma' IN (tenant_id, name)

SELECT id FROM users WHERE tenant_id = 'emma' UNION SELECT id FROM users WHERE tenant_id = 'ivan'

SELECT id FROM users WHERE tenant_id = 'o''neil'

SELECT id FROM users WHERE tenant_id = 'de vries'

SELECT id FROM users WHERE tenant_id = 'de  vries'

SELECT id FROM users WHERE tenant_id = 'Bob' COLLATE "C"

SELECT id FROM users WHERE tenant_id = 'bob' COLLATE ci

SELECT count(*) FROM users WHERE tenant_id IN ('BOB' COLLATE ci, 'zed')

SELECT count(*) FROM users WHERE tenant_id = ANY(ARRAY['BOB', 'EMMA'] COLLATE ci)

-- int
SELECT id FROM accounts WHERE acct = 5.00000000000000001::float8

-- int
SELECT id FROM accounts WHERE acct = 4.9999999999999999::float8

-- int
SELECT id FROM accounts WHERE acct = ' 5 '

-- int
SELECT id FROM accounts WHERE acct = '5'::text::int

-- int
SELECT id FROM accounts WHERE acct = 5::smallint

-- int
SELECT id FROM accounts WHERE acct = 5.0::real

-- int
SELECT id FROM accounts WHERE acct = 5e0

-- int
SELECT id FROM accounts WHERE acct = 50e-1

-- int
SELECT id FROM accounts WHERE acct = 10 / 2

-- int
SELECT id FROM accounts WHERE acct = 11 / 2

-- int
SELECT id FROM accounts WHERE acct = 5 AND acct = 5::bigint

-- int
SELECT id FROM accounts WHERE acct IN (5, 5.0, '5')

-- int
SELECT id FROM accounts WHERE acct = 5.4::int

-- int
SELECT id FROM accounts WHERE acct = 4.5::int

-- int
SELECT id FROM accounts WHERE acct::text = '05'

-- int
SELECT id FROM accounts WHERE acct::numeric = 5.000

-- int
SELECT id FROM accounts WHERE acct = -(-5)

-- int
SELECT id FROM accounts WHERE acct = +5

-- int
SELECT id FROM accounts WHERE acct = 5::oid

-- int
SELECT id FROM accounts WHERE acct = '5'::int8 AND acct = '5.0'::numeric

-- int
SELECT id FROM accounts WHERE acct = ANY('{5, 6}')

-- int
SELECT id FROM accounts WHERE acct = ANY('{5.0}'::numeric[])

-- int
SELECT id FROM accounts WHERE acct BETWEEN 4.5 AND 5.5

-- int
SELECT id FROM accounts WHERE acct IN (SELECT 5)

-- int
SELECT id FROM accounts WHERE acct = true::int * 5

-- int
SELECT id FROM accounts WHERE acct = '0005'

-- int
SELECT id FROM accounts WHERE acct = '5.0'::float4

-- int
SELECT id FROM accounts WHERE acct = 5 OR acct = 7.0

-- aggregates (FILTER, ordered-set, json, statistics), GROUP BY forms, DISTINCT ON, windows, whole rows

SELECT count(*) FILTER (WHERE age > 30), count(*) FROM users

SELECT status, count(*) FILTER (WHERE total > 100), sum(total) FILTER (WHERE status <> 'void') FROM orders GROUP BY status

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders

SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY total) FROM orders

SELECT mode() WITHIN GROUP (ORDER BY status) FROM orders

SELECT status, percentile_disc(0.25) WITHIN GROUP (ORDER BY total) FROM orders GROUP BY status

SELECT rank('b') WITHIN GROUP (ORDER BY name COLLATE "C") FROM users

SELECT json_agg(id ORDER BY id) FROM orders

SELECT jsonb_agg(total ORDER BY total, id) FROM orders

SELECT jsonb_object_agg(tenant_id || ':' || id, total) FROM orders

SELECT array_agg(DISTINCT status ORDER BY status) FROM orders

SELECT string_agg(DISTINCT status, ',' ORDER BY status) FROM orders

SELECT count(DISTINCT (tenant_id, status)) FROM orders

SELECT count(DISTINCT tenant_id), count(DISTINCT status) FROM orders

SELECT stddev(total), variance(total) FROM orders

SELECT stddev_pop(age), var_samp(age) FROM users

SELECT round(avg(age), 10), round(avg(total), 10) FROM users, orders WHERE users.tenant_id = orders.tenant_id AND users.id = orders.user_id

SELECT sum(age::bigint * 1000000000000), avg(age::numeric) FROM users

SELECT avg(id), sum(id) FROM orders

SELECT corr(age, id), regr_slope(age, id) FROM users

SELECT covar_pop(total, id) FROM orders

SELECT bit_and(age), bit_or(age), bit_xor(age) FROM users

SELECT bool_and(active), bool_or(active), every(age > 5) FROM users

SELECT min(created_at) < max(created_at) FROM orders

SELECT max(last_seen), min(last_seen) FROM users

SELECT sum(total) / count(*) FROM orders

SELECT sum(total)::float8 / nullif(count(*), 0) FROM orders

SELECT avg(total::float8)::numeric(20,6) FROM orders

SELECT status, avg(total) FROM orders GROUP BY status HAVING avg(total) > 100 ORDER BY 2 DESC

SELECT country, count(*) FROM users GROUP BY country ORDER BY count(*) DESC, country NULLS FIRST

SELECT country, count(*) FROM users GROUP BY 1 ORDER BY 1 NULLS FIRST LIMIT 3

SELECT country AS c, count(*) FROM users GROUP BY c ORDER BY c DESC NULLS LAST

SELECT upper(country), count(*) FROM users GROUP BY upper(country)

SELECT age / 10 AS decade, count(*) FROM users GROUP BY age / 10 ORDER BY decade NULLS LAST

SELECT CASE WHEN age > 40 THEN 'old' ELSE 'young' END, count(*) FROM users GROUP BY 1

SELECT date_trunc('day', created_at) d, count(*) FROM orders GROUP BY d ORDER BY d

SELECT extract(year FROM created_at), sum(total) FROM orders GROUP BY 1

SELECT tenant_id, count(*) FROM orders GROUP BY ROLLUP(tenant_id) ORDER BY 1 NULLS FIRST

SELECT status, currency, count(*), grouping(status, currency) FROM orders GROUP BY CUBE(status, currency)

SELECT status, count(*) FROM orders GROUP BY GROUPING SETS ((status), ()) ORDER BY status NULLS LAST

SELECT status, currency, sum(total) FROM orders GROUP BY status, ROLLUP(currency)

SELECT count(*) FROM (SELECT DISTINCT age FROM users) s

SELECT count(*) FROM (SELECT age FROM users GROUP BY age) s

SELECT count(*), count(age), count(DISTINCT age) FROM users

SELECT age, count(*) FROM users GROUP BY age HAVING count(*) > 1

SELECT DISTINCT ON (status) status, id, total FROM orders ORDER BY status, total DESC, id

SELECT DISTINCT ON (tenant_id) tenant_id, id FROM orders ORDER BY tenant_id, id DESC

SELECT DISTINCT ON (currency) currency, tenant_id, id FROM orders ORDER BY currency, tenant_id, id

SELECT DISTINCT status FROM orders ORDER BY status LIMIT 2 OFFSET 1

SELECT DISTINCT age % 3 FROM users

SELECT tenant_id, count(*) OVER () FROM users

SELECT id, count(*) OVER (PARTITION BY status) FROM orders

SELECT id, lag(id) OVER (ORDER BY tenant_id, id) FROM orders

SELECT id, ntile(3) OVER (ORDER BY tenant_id, id) FROM orders

SELECT tenant_id, sum(count(*)) OVER () FROM orders GROUP BY tenant_id

SELECT tenant_id, id, sum(total) OVER (PARTITION BY tenant_id ORDER BY id) FROM orders

SELECT tenant_id, id, first_value(id) OVER (PARTITION BY tenant_id ORDER BY id DESC) FROM orders

SELECT status, id, row_number() OVER (PARTITION BY status ORDER BY total, tenant_id, id) FROM orders

SELECT * FROM (SELECT tenant_id, id, rank() OVER (ORDER BY total DESC) r FROM orders) s WHERE r <= 3

SELECT id, percent_rank() OVER (ORDER BY total) FROM orders

SELECT id, cume_dist() OVER (PARTITION BY currency ORDER BY total) FROM orders

SELECT id, sum(total) OVER (ORDER BY tenant_id, id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM orders

SELECT id, avg(age) OVER w FROM users WINDOW w AS (PARTITION BY country)

SELECT tenant_id, max(total) FILTER (WHERE status = 'paid') OVER (PARTITION BY tenant_id) FROM orders

SELECT * FROM orders WHERE id = (SELECT max(id) FROM orders)

SELECT tenant_id FROM users WHERE age = (SELECT max(age) FROM users)

SELECT tenant_id, id FROM users WHERE age > (SELECT avg(age) FROM users)

SELECT tenant_id, id FROM users WHERE id IN (SELECT buyer FROM orders)

SELECT tenant_id, id FROM users WHERE id NOT IN (SELECT buyer FROM orders WHERE buyer IS NOT NULL)

SELECT u.tenant_id, o.tenant_id, o.id FROM users u JOIN orders o ON o.buyer = u.id

SELECT count(*) FROM users u, orders o

SELECT count(*) FROM users u CROSS JOIN users v WHERE u.age = v.age

SELECT tenant_id, id, name FROM users ORDER BY age DESC NULLS LAST, tenant_id, id LIMIT 3 OFFSET 2

SELECT tenant_id, id FROM orders ORDER BY total DESC, tenant_id, id OFFSET 5

SELECT tenant_id, id FROM orders ORDER BY total, tenant_id, id LIMIT (SELECT 2)

SELECT tenant_id, id FROM orders ORDER BY total, tenant_id, id LIMIT 2 + 1

SELECT tenant_id, id FROM orders ORDER BY total, tenant_id, id FETCH FIRST 3 ROWS WITH TIES

SELECT total FROM orders ORDER BY total FETCH FIRST 2 ROWS WITH TIES

SELECT status FROM orders ORDER BY status OFFSET 2 ROWS FETCH NEXT 1 ROW WITH TIES

SELECT u FROM users u ORDER BY u.tenant_id, u.id LIMIT 2

SELECT to_json(u) FROM users u WHERE tenant_id IN ('emma', 'alice')

SELECT row_to_json(t) FROM (SELECT tenant_id, count(*) FROM orders GROUP BY 1) t

SELECT (u).name FROM (SELECT u FROM users u) s

SELECT ROW(tenant_id, id) FROM users ORDER BY 1

SELECT array_agg(u ORDER BY u.id, u.tenant_id) FROM users u

SELECT tenant_id, array_agg(id ORDER BY id) FROM orders GROUP BY tenant_id ORDER BY tenant_id COLLATE "C"

SELECT min(tenant_id COLLATE "C"), max(tenant_id COLLATE "C") FROM users

SELECT min(name), max(name) FROM users

SELECT name FROM users ORDER BY name COLLATE "C", id, tenant_id LIMIT 4

SELECT name FROM users ORDER BY name, id, tenant_id LIMIT 4

SELECT count(DISTINCT name COLLATE ci) FROM users

SELECT lower(name) l, count(*) FROM users GROUP BY l ORDER BY l

SELECT currency, count(*) FROM orders GROUP BY currency ORDER BY currency DESC

SELECT sum(total) FROM orders WHERE currency = 'EUR  '

SELECT sum(total) FROM orders WHERE currency::text = 'EUR'

SELECT sum(interval '1 hour' * age) FROM users

SELECT avg(interval '1 day' * id) FROM orders

SELECT max(created_at - last_seen) FROM users

SELECT min(created_at::date), max(created_at::date) FROM orders

SELECT sum(total * 1.5), sum(total / 3) FROM orders

SELECT sum(age::real), avg(age::real) FROM users

SELECT sum('NaN'::numeric + total) FROM orders

SELECT max(total), min(-total) FROM orders

SELECT count(*) FROM orders WHERE total::text LIKE '%.5%'

SELECT array_length(array_agg(id), 1) FROM orders

SELECT cardinality(array_agg(DISTINCT currency)) FROM orders

SELECT unnest(array_agg(id ORDER BY id)) FROM orders

-- writes (MERGE, ON CONFLICT, data-modifying WITH), blocks, settings, cursors, locks, empty inputs

-- steps
BEGIN; MERGE INTO orders o USING (VALUES ('emma', 1, 9.99)) v(t, i, x) ON o.tenant_id = v.t AND o.id = v.i WHEN MATCHED THEN UPDATE SET total = v.x WHEN NOT MATCHED THEN DO NOTHING; SELECT tenant_id, id, total FROM orders WHERE tenant_id = 'emma' ORDER BY id; ROLLBACK

-- steps
BEGIN; MERGE INTO orders o USING currencies c ON o.currency = c.code WHEN MATCHED THEN UPDATE SET total = o.total + 1; SELECT sum(total) FROM orders; ROLLBACK

-- steps
BEGIN; MERGE INTO currencies c USING (SELECT DISTINCT currency FROM orders) o ON c.code = o.currency WHEN MATCHED THEN UPDATE SET digits = 3; SELECT code, digits FROM currencies ORDER BY code; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('emma', 900, 'x') ON CONFLICT (tenant_id, id) DO UPDATE SET name = 'y' RETURNING tenant_id, id, name; SELECT count(*) FROM users; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) SELECT tenant_id, id, 'dup' FROM users WHERE tenant_id = 'emma' ON CONFLICT DO NOTHING RETURNING id; SELECT count(*) FROM users; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) SELECT tenant_id, id + 1000, 'copy' FROM users ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name RETURNING tenant_id, id; SELECT count(*) FROM users WHERE name = 'copy'; ROLLBACK

-- steps
BEGIN; INSERT INTO currencies VALUES ('XXX', 'test', 2) ON CONFLICT (code) DO UPDATE SET name = 'z' RETURNING *; SELECT count(*) FROM currencies; ROLLBACK

-- steps
BEGIN; INSERT INTO currencies VALUES ('EUR', 'test', 2) ON CONFLICT (code) DO UPDATE SET name = excluded.name || '!' RETURNING code, name; SELECT name FROM currencies WHERE code = 'EUR'; ROLLBACK

-- steps
BEGIN; WITH d AS (DELETE FROM orders WHERE status = 'void' RETURNING tenant_id, id) SELECT count(*) FROM d; SELECT count(*) FROM orders; ROLLBACK

-- steps
BEGIN; WITH u AS (UPDATE orders SET total = total * 2 WHERE tenant_id = 'emma' RETURNING total) SELECT sum(total) FROM u; ROLLBACK

-- steps
BEGIN; WITH i AS (INSERT INTO orders (tenant_id, id, user_id, currency, total) VALUES ('emma', 901, 1, 'EUR', 5) RETURNING *) SELECT count(*) FROM i; SELECT count(*) FROM orders WHERE tenant_id = 'emma'; ROLLBACK

-- steps
BEGIN; UPDATE orders SET total = total + 1 WHERE id IN (SELECT id FROM orders WHERE tenant_id = 'emma') RETURNING tenant_id, id; ROLLBACK

-- steps
BEGIN; UPDATE orders SET tenant_id = 'ivan' WHERE tenant_id = 'emma' AND id = 1; SELECT count(*) FROM orders WHERE tenant_id = 'ivan'; ROLLBACK

-- steps
BEGIN; UPDATE users SET tenant_id = tenant_id WHERE tenant_id = 'emma'; SELECT count(*) FROM users WHERE tenant_id = 'emma'; ROLLBACK

-- steps
BEGIN; DELETE FROM users WHERE tenant_id = 'zed'; SELECT count(*) FROM users; ROLLBACK

-- steps
BEGIN; DELETE FROM orders o USING currencies c WHERE o.currency = c.code AND c.digits = 0 RETURNING o.tenant_id, o.id; ROLLBACK

-- steps
BEGIN; UPDATE orders o SET total = c.digits FROM currencies c WHERE o.currency = c.code RETURNING o.tenant_id, o.id, o.total; ROLLBACK

-- steps
BEGIN; UPDATE currencies SET digits = digits + 1 RETURNING code, digits; SELECT sum(digits) FROM currencies; ROLLBACK

-- steps
BEGIN; DELETE FROM currencies WHERE code = 'JPY' RETURNING *; SELECT count(*) FROM currencies; ROLLBACK

-- steps
BEGIN; INSERT INTO orders (tenant_id, id, user_id, currency, total) VALUES ('emma', 902, 1, 'EUR', 1), ('ivan', 902, 1, 'EUR', 2), ('zed', 902, 1, 'EUR', 3) RETURNING tenant_id, id, total; SELECT tenant_id, total FROM orders WHERE id = 902; ROLLBACK

-- steps
BEGIN; INSERT INTO orders VALUES ('emma', 903, 1, NULL, 'EUR', 1, 'open', now()) RETURNING tenant_id, id; SELECT count(*) FROM orders WHERE id = 903; ROLLBACK

-- steps
BEGIN; INSERT INTO orders (tenant_id, id, user_id, currency, total) SELECT 'ivan', 904, 1, code, 1 FROM currencies RETURNING currency; ROLLBACK

-- steps
BEGIN; SAVEPOINT a; UPDATE orders SET total = 0; ROLLBACK TO a; SELECT sum(total) > 0 FROM orders; COMMIT

-- steps
BEGIN; UPDATE orders SET total = 0 WHERE tenant_id = 'emma'; SAVEPOINT a; UPDATE orders SET total = 1 WHERE tenant_id = 'ivan'; ROLLBACK TO a; SELECT tenant_id, sum(total) FROM orders WHERE tenant_id IN ('emma', 'ivan') GROUP BY 1; ROLLBACK

-- steps
BEGIN; SELECT 1/0; SELECT 1; ROLLBACK

-- steps
BEGIN; UPDATE orders SET total = 0 WHERE tenant_id = 'emma'; SELECT 1/0; COMMIT; SELECT sum(total) FROM orders WHERE tenant_id = 'emma'

-- steps
BEGIN; UPDATE orders SET total = 0; SELECT 1/0; COMMIT; SELECT sum(total) FROM orders

-- steps
BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM orders; SELECT count(*) FROM users; COMMIT

-- steps
BEGIN READ ONLY; SELECT count(*) FROM orders; UPDATE orders SET total = 1 WHERE tenant_id = 'emma'; ROLLBACK

-- steps
START TRANSACTION; SELECT sum(total) FROM orders; END

-- steps
SET enable_hashagg = off; SELECT status, count(*) FROM orders GROUP BY status; RESET enable_hashagg

-- steps
SET extra_float_digits = 0; SELECT sum(age::float8) / 3, avg(age::real) FROM users; RESET extra_float_digits

-- steps
SET datestyle = 'SQL, DMY'; SELECT min(created_at), max(created_at::date) FROM orders; RESET datestyle

-- steps
SET timezone = 'Asia/Kolkata'; SELECT min(created_at), date_trunc('day', max(created_at)) FROM orders; RESET timezone

-- steps
SET intervalstyle = 'iso_8601'; SELECT max(created_at - last_seen) FROM users; RESET intervalstyle

-- steps
SET lc_monetary = 'C'; SELECT sum(total::money) FROM orders; RESET lc_monetary

-- steps
SET bytea_output = 'escape'; SELECT string_agg(convert_to(tenant_id, 'UTF8'), ''::bytea ORDER BY tenant_id, id) FROM users; RESET bytea_output

-- steps
SET search_path = pg_catalog, public; SELECT count(*) FROM orders; RESET search_path

-- steps
CREATE TEMP TABLE t1 (k text); INSERT INTO t1 VALUES ('emma'), ('ivan'); SELECT count(*) FROM t1; DROP TABLE t1

-- steps
PREPARE p1 AS SELECT count(*) FROM orders WHERE tenant_id = $1; EXECUTE p1('emma'); EXECUTE p1('ivan'); DEALLOCATE p1

-- steps
PREPARE p2(text) AS SELECT sum(total) FROM orders WHERE tenant_id <> $1; EXECUTE p2('emma'); DEALLOCATE p2

-- steps
PREPARE p3 AS UPDATE orders SET total = total WHERE tenant_id = $1 RETURNING id; BEGIN; EXECUTE p3('ivan'); ROLLBACK; DEALLOCATE p3

-- steps
DECLARE c1 CURSOR FOR SELECT id FROM orders ORDER BY id

-- steps
BEGIN; DECLARE c2 CURSOR FOR SELECT tenant_id, id FROM orders WHERE tenant_id = 'emma' ORDER BY id; FETCH 2 FROM c2; FETCH ALL FROM c2; CLOSE c2; COMMIT

-- steps
BEGIN; DECLARE c3 CURSOR FOR SELECT tenant_id, id FROM orders ORDER BY tenant_id, id; FETCH 3 FROM c3; COMMIT

-- steps
SELECT count(*) FROM orders; SELECT count(*) FROM users WHERE tenant_id = 'emma'; SELECT 1

-- steps
SELECT pg_advisory_lock(1); SELECT count(*) FROM orders; SELECT pg_advisory_unlock(1)

-- steps
BEGIN; LOCK TABLE orders IN SHARE MODE; SELECT count(*) FROM orders; COMMIT

-- steps
BEGIN; SELECT * FROM orders WHERE tenant_id = 'emma' ORDER BY id FOR UPDATE; ROLLBACK

-- steps
BEGIN; SELECT tenant_id, id FROM orders ORDER BY tenant_id, id LIMIT 2 FOR UPDATE; ROLLBACK

-- steps
BEGIN; SELECT count(*) FROM orders FOR SHARE; ROLLBACK

-- steps
TRUNCATE eu_audit

-- steps
BEGIN; TRUNCATE orders; SELECT count(*) FROM orders; ROLLBACK

-- steps
BEGIN; TRUNCATE currencies CASCADE; SELECT count(*) FROM currencies; ROLLBACK

-- steps
BEGIN; INSERT INTO eu_audit (tenant_id, action) VALUES ('emma', 'x') RETURNING tenant_id; SELECT count(*) FROM eu_audit; ROLLBACK

-- steps
BEGIN; INSERT INTO eu_audit (tenant_id, action) SELECT tenant_id, 'bulk' FROM users; SELECT count(*) FROM eu_audit WHERE action = 'bulk'; ROLLBACK

-- steps
BEGIN; UPDATE eu_audit SET action = 'x' WHERE tenant_id IN (SELECT tenant_id FROM users WHERE age > 30) RETURNING id; ROLLBACK

-- steps
SELECT count(*) FROM eu_audit e JOIN users u ON u.tenant_id = e.tenant_id

-- steps
SELECT e.tenant_id, count(*) FROM eu_audit e WHERE e.tenant_id IN (SELECT tenant_id FROM orders) GROUP BY 1

-- steps
COPY (SELECT tenant_id, id FROM orders ORDER BY tenant_id, id) TO STDOUT

-- steps
EXPLAIN SELECT count(*) FROM orders

-- steps
SHOW search_path

-- steps
SELECT current_setting('search_path'), current_database()

-- steps
SELECT pg_typeof(sum(total)), pg_typeof(avg(age)), pg_typeof(count(*)) FROM orders, users WHERE false

-- steps
SELECT count(*) FROM orders WHERE false

-- steps
SELECT sum(total), avg(total), min(total), max(total), count(total), array_agg(total), string_agg(status, ',') FROM orders WHERE false

-- steps
SELECT status, count(*) FROM orders WHERE false GROUP BY status

-- steps
SELECT count(*) FROM orders HAVING count(*) > 1000

-- steps
SELECT 1 FROM orders HAVING true

-- steps
SELECT count(*) FROM orders GROUP BY ()

-- values of every type through merges, orders and finishes: NaN, infinities, -0, uuid, ranges, jsonb, bytea, inet, intervals, arrays, bit, "char", composites, money, big numerics

SELECT CASE WHEN age > 40 THEN 'NaN'::float8 ELSE age END x FROM users ORDER BY x DESC LIMIT 5

SELECT CASE WHEN age > 40 THEN 'NaN'::float8 ELSE age END x FROM users ORDER BY x LIMIT 50

SELECT CASE WHEN age > 40 THEN 'NaN'::numeric ELSE age END x FROM users ORDER BY x DESC NULLS LAST LIMIT 5

SELECT CASE WHEN age > 50 THEN 'Infinity'::float8 WHEN age < 20 THEN '-Infinity' ELSE age END x FROM users ORDER BY x LIMIT 6

SELECT CASE WHEN age > 40 THEN '-0'::float8 ELSE 0::float8 END x, count(*) FROM users GROUP BY x

SELECT max(CASE WHEN age > 40 THEN 'NaN'::float8 ELSE age END), min(CASE WHEN age > 40 THEN 'NaN'::float8 ELSE age END) FROM users

SELECT max(CASE WHEN age > 40 THEN 'NaN'::numeric ELSE age END), sum(CASE WHEN age > 60 THEN 'NaN'::numeric ELSE 1 END) FROM users

SELECT age FROM users ORDER BY age DESC LIMIT 4

SELECT age FROM users ORDER BY age NULLS FIRST LIMIT 4

SELECT age, id FROM users ORDER BY age DESC NULLS LAST, id DESC, tenant_id LIMIT 4

SELECT active, count(*) FROM users GROUP BY active ORDER BY active DESC

SELECT tenant_id, active FROM users ORDER BY active, tenant_id COLLATE "C", id LIMIT 5

SELECT md5(tenant_id)::uuid u FROM users ORDER BY u LIMIT 5

SELECT md5(tenant_id)::uuid u, count(*) FROM users GROUP BY u ORDER BY u DESC

SELECT int4range(age / 10 * 10, age / 10 * 10 + 10) r, count(*) FROM users GROUP BY r ORDER BY r

SELECT int4range(age, age + 5) r FROM users ORDER BY r LIMIT 5

SELECT ('{"a":' || coalesce(age, 0) || '}')::jsonb j, count(*) FROM users GROUP BY j ORDER BY j

SELECT jsonb_build_object('t', tenant_id, 'n', count(*)) FROM orders GROUP BY tenant_id

SELECT convert_to(name, 'UTF8') b, count(*) FROM users GROUP BY b ORDER BY b

SELECT min(convert_to(name, 'UTF8')), max(convert_to(name, 'UTF8')) FROM users

SELECT ('10.0.0.1'::inet + age) ip FROM users ORDER BY ip LIMIT 5

SELECT ('10.0.0.0/8'::cidr) c, count(*) FROM users GROUP BY c

SELECT age * interval '1 minute' iv, count(*) FROM users GROUP BY iv ORDER BY iv NULLS FIRST

SELECT max(age * interval '1 minute'), min(interval '1 day' - age * interval '1 hour') FROM users

SELECT interval '1 day' = interval '24 hours', count(*) FROM users

SELECT CASE WHEN age > 40 THEN interval '1 day' ELSE interval '24 hours' END iv, count(*) FROM users GROUP BY iv

SELECT DISTINCT CASE WHEN age > 40 THEN interval '1 day' ELSE interval '24 hours' END::text FROM users

SELECT ARRAY[age, id] a, count(*) FROM users GROUP BY a ORDER BY a LIMIT 5

SELECT array_agg(ARRAY[age, id] ORDER BY id, tenant_id, age) FROM users WHERE age IS NOT NULL

SELECT ARRAY[NULL, age] a FROM users ORDER BY a, tenant_id, id LIMIT 3

SELECT tags, count(*) FROM badges GROUP BY tags ORDER BY tags NULLS FIRST

SELECT bits, count(*) FROM badges GROUP BY bits ORDER BY bits

SELECT bits & B'1010', count(*) FROM badges GROUP BY 1

SELECT max(bits), min(bits) FROM badges

SELECT grade, count(*) FROM badges GROUP BY grade ORDER BY grade NULLS LAST

SELECT price, count(*) FROM badges GROUP BY price ORDER BY price NULLS FIRST

SELECT (price).amount, (price).cur FROM badges ORDER BY 1 NULLS FIRST, 2, tenant_id, id LIMIT 4

SELECT max((price).amount), sum((price).amount) FROM badges

SELECT weight FROM badges ORDER BY weight DESC NULLS LAST, tenant_id, id LIMIT 3

SELECT sum(weight), avg(weight), max(weight) FROM badges

SELECT tenant_id, weight::numeric(10,3) FROM badges ORDER BY 2, 1, id LIMIT 5

SELECT total::money m, count(*) FROM orders GROUP BY m ORDER BY m LIMIT 4

SELECT created_at::date d, count(*) FROM orders GROUP BY d ORDER BY d DESC LIMIT 3

SELECT created_at AT TIME ZONE 'UTC' t FROM orders ORDER BY t, tenant_id, id LIMIT 3

SELECT to_char(created_at, 'YYYY-MM'), count(*) FROM orders GROUP BY 1 ORDER BY 1

SELECT 'EUR'::char(5) || currency, count(*) FROM orders GROUP BY 1

SELECT currency, length(currency), count(*) FROM orders GROUP BY currency

SELECT currency::varchar, count(*) FROM orders GROUP BY 1 ORDER BY 1

SELECT name::bytea, count(*) FROM users GROUP BY 1

SELECT xmlelement(name u, tenant_id)::text x FROM users ORDER BY x LIMIT 3

SELECT point(age, id)::text p FROM users ORDER BY p LIMIT 3

SELECT tsvector(name) t, count(*) FROM users GROUP BY t

SELECT string_to_array(name, 'e') a, count(*) FROM users GROUP BY a ORDER BY a

SELECT ROW(age, id)::text r FROM users ORDER BY r LIMIT 3

SELECT (SELECT max(age) FROM users) - age d FROM users ORDER BY d NULLS LAST, tenant_id, id LIMIT 3

SELECT 12345678901234567890::numeric * age n FROM users ORDER BY n DESC NULLS LAST LIMIT 3

SELECT sum(12345678901234567890::numeric * age), sum(age::bigint * 9223372036854775) FROM users

SELECT sum(9223372036854775807::bigint) FROM orders

SELECT sum(2147483647) FROM orders

SELECT avg(2147483647::int) FROM orders

SELECT max(9223372036854775807::bigint - id) FROM orders

SELECT count(*)::int2 FROM orders

SELECT -age % 7 m, count(*) FROM users GROUP BY m ORDER BY m NULLS FIRST

SELECT age::float4 / 3 f FROM users ORDER BY f DESC NULLS LAST LIMIT 3

SELECT 1.0 / 3 * age x FROM users ORDER BY x NULLS FIRST LIMIT 3

SELECT round(age / 7.0, 20) x FROM users ORDER BY x DESC NULLS LAST LIMIT 3

SELECT age::numeric(5,2) x, count(*) FROM users GROUP BY x ORDER BY x NULLS FIRST LIMIT 3

SELECT 1.10::numeric x UNION SELECT 1.1::numeric

SELECT DISTINCT total * 0 FROM orders

SELECT total * 0 + 0.00 t, count(*) FROM orders GROUP BY t

SELECT scale(sum(total)), scale(avg(total)), scale(max(total * 1.000)) FROM orders

SELECT sum(total)::text, avg(total)::text FROM orders WHERE tenant_id IN ('emma', 'ivan', 'alice')

-- strings of several statements: an error rolls back every region's writes of the string

UPDATE orders SET total = 0 WHERE tenant_id = 'emma'; UPDATE orders SET total = 0 WHERE tenant_id = 'ivan'; SELECT 1/0

SELECT tenant_id, sum(total) FROM orders GROUP BY tenant_id

UPDATE currencies SET digits = 9; SELECT 1/0

SELECT code, digits FROM currencies

INSERT INTO users (tenant_id, id, name) VALUES ('emma', 777, 'x'), ('ivan', 777, 'y'); SELECT count(*) FROM users WHERE id = 777; SELECT 1/0

SELECT count(*) FROM users WHERE id = 777

DELETE FROM orders WHERE status = 'void'; SELECT count(*) FROM orders; SELECT 1/0

SELECT count(*) FROM orders

SELECT sum(total) FROM orders WHERE tenant_id = 'emma'

BEGIN; UPDATE orders SET total = 2 WHERE tenant_id = 'ivan'; UPDATE orders SET total = 2 WHERE tenant_id = 'alice'

SELECT sum(total) FROM orders WHERE tenant_id IN ('ivan', 'alice')

UPDATE orders SET total = total WHERE tenant_id = 'emma'; SELECT count(*) FROM orders; UPDATE orders SET total = total WHERE tenant_id = 'ivan'; ROLLBACK

SELECT count(*), sum(total) FROM orders

SAVEPOINT x; SELECT 1

SELECT 1; BEGIN; SELECT count(*) FROM orders; COMMIT; SELECT 2

SELECT sum(total) FROM orders WHERE tenant_id = 'emma'

UPDATE orders SET total = 4 WHERE tenant_id = 'emma'; UPDATE orders SET total = 4 WHERE tenant_id = 'ivan' RETURNING 1/(total - 4)

SELECT tenant_id, sum(total) FROM orders WHERE tenant_id IN ('emma', 'ivan') GROUP BY 1

INSERT INTO orders (tenant_id, id, user_id, currency, total) VALUES ('emma', 1, 1, 'EUR', 1); SELECT 1

INSERT INTO orders (tenant_id, id, user_id, currency, total) VALUES ('ivan', 5000, 1, 'EUR', 1), ('emma', 1, 1, 'EUR', 1)

SELECT count(*) FROM orders WHERE id = 5000

-- A CTE named like a table: its body reads the table, the outer query the CTE.
WITH orders AS (SELECT * FROM orders WHERE tenant_id = 'emma') SELECT count(*) FROM orders

WITH orders AS (SELECT tenant_id, total FROM orders) SELECT tenant_id, sum(total) FROM orders GROUP BY 1 ORDER BY 1

WITH users AS (SELECT tenant_id FROM orders), orders AS (SELECT * FROM users) SELECT count(*) FROM orders

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT count(*) FROM n, orders

-- Name scopes: CTEs, aliases and derived tables named like tables; key predicates in many spellings.

SELECT (WITH orders AS (SELECT 1 AS x) SELECT count(*) FROM orders), count(*) FROM orders WHERE tenant_id = 'emma'

WITH users AS (SELECT * FROM users WHERE tenant_id = 'emma') SELECT count(*) FROM users JOIN public.users pu ON pu.id = users.id

WITH users AS (SELECT * FROM orders WHERE tenant_id = 'ivan') SELECT count(*) FROM users

SELECT count(*) FROM orders users WHERE users.tenant_id = 'emma'

SELECT count(*) FROM (SELECT * FROM orders) users WHERE users.tenant_id = 'emma'

SELECT count(*) FROM users orders WHERE EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = orders.tenant_id) AND orders.tenant_id = 'emma'

SELECT count(*) FROM users u WHERE EXISTS (SELECT 1 FROM currencies WHERE tenant_id = 'emma')

SELECT count(*) FROM users u WHERE u.tenant_id = 'emma' AND EXISTS (SELECT 1 FROM orders WHERE tenant_id = 'ivan')

SELECT count(*) FROM users u WHERE u.tenant_id = 'emma' AND NOT EXISTS (SELECT 1 FROM orders WHERE tenant_id = 'ivan')

WITH x AS (SELECT * FROM orders) SELECT count(*) FROM (WITH x AS (SELECT * FROM users) SELECT * FROM x) s

WITH x AS (SELECT * FROM orders WHERE tenant_id = 'emma') SELECT count(*) FROM x, LATERAL (WITH x AS (SELECT 1 AS n) SELECT * FROM x) y

SELECT count(*) FROM orders WHERE tenant_id = 'emma' AND id IN (WITH orders AS (SELECT 2 AS id) SELECT id FROM orders)

SELECT count(*) FROM (TABLE orders) t WHERE tenant_id = 'emma'

SELECT count(*) FROM (TABLE orders) t

WITH orders AS MATERIALIZED (SELECT * FROM orders) SELECT count(*) FROM orders WHERE tenant_id = 'ivan'

SELECT tenant_id, count(*) FROM (WITH o AS (SELECT * FROM orders) SELECT * FROM o) s GROUP BY 1 ORDER BY 1

SELECT count(*) FROM users JOIN orders USING (tenant_id) WHERE tenant_id = 'emma'

SELECT count(*) FROM users u LEFT JOIN orders o ON o.tenant_id = u.tenant_id AND o.tenant_id = 'emma'

SELECT count(*) FROM users u WHERE u.tenant_id = (SELECT tenant_id FROM orders WHERE tenant_id = 'emma' LIMIT 1)

SELECT count(*) FROM orders o WHERE o.tenant_id IN (SELECT u.tenant_id FROM users u WHERE u.tenant_id = 'emma')

SELECT count(*) FROM users WHERE tenant_id = 'emma' OR tenant_id = 'ivan'

SELECT count(*) FROM users WHERE NOT (tenant_id <> 'emma')

SELECT count(*) FROM users WHERE tenant_id IS NOT DISTINCT FROM 'emma'

SELECT count(*) FROM users WHERE (tenant_id, id) = ('emma', 1)

SELECT count(*) FROM users WHERE tenant_id BETWEEN 'emma' AND 'emma'

SELECT count(*) FROM users WHERE tenant_id LIKE 'emma'

SELECT count(*) FROM users WHERE tenant_id = ANY ('{emma,ivan}')

SELECT count(*) FROM users WHERE tenant_id = ANY (ARRAY['emma', 'ivan'])

SELECT count(*) FROM users WHERE tenant_id = CASE WHEN true THEN 'emma' END

SELECT count(*) FROM users WHERE tenant_id = 'emma' AND tenant_id = 'ivan'

SELECT count(*) FROM users WHERE 'emma' = tenant_id

SELECT count(*) FROM users WHERE tenant_id = 'emma'::varchar(2)

SELECT count(*) FROM users WHERE tenant_id::varchar(2) = 'em'

SELECT count(*) FROM users WHERE tenant_id = 'emma' COLLATE "C"

-- int
SELECT count(*) FROM accounts WHERE acct = 4.6::int

-- int
SELECT count(*) FROM accounts WHERE acct = 4.5::int

-- int
SELECT count(*) FROM accounts WHERE acct = 5.4

-- int
SELECT count(*) FROM accounts WHERE acct = '4.6'::numeric::int

-- int
SELECT count(*) FROM accounts WHERE acct = 5::bigint

-- int
SELECT count(*) FROM accounts WHERE acct = 5e0

-- int
SELECT count(*) FROM accounts WHERE acct = 0x5

-- int
SELECT count(*) FROM accounts WHERE acct = 5::smallint::int

-- int
SELECT count(*) FROM accounts WHERE acct = 1_0 / 2

-- int
SELECT count(*) FROM accounts WHERE acct = -(-5)

-- int
SELECT count(*) FROM accounts WHERE acct = +5

-- int
SELECT count(*) FROM accounts WHERE acct IN (5.0, 4.6::int, '5')

-- int
SELECT count(*) FROM accounts WHERE acct::text = '5'

-- int
SELECT count(*) FROM accounts WHERE acct = ' 5 '

-- sub-queries whose rows for a key depend on other keys' rows, beside a key constraint

SELECT u1.age FROM users u1 WHERE u1.tenant_id IN (SELECT u3.tenant_id FROM users u3 ORDER BY 1 LIMIT 1) AND u1.tenant_id IN ('ivan', 'emma')

SELECT u1.age FROM users u1 WHERE u1.tenant_id IN (SELECT u3.tenant_id FROM users u3 ORDER BY 1 DESC LIMIT 1) AND u1.tenant_id = 'ivan'

SELECT u1.age FROM users u1 JOIN (SELECT tenant_id FROM users ORDER BY 1 LIMIT 1) s ON s.tenant_id = u1.tenant_id WHERE u1.tenant_id = 'ivan'

SELECT count(*) FROM users u1 WHERE u1.tenant_id IN (SELECT max(o.tenant_id) FROM orders o) AND u1.tenant_id = 'ivan'

SELECT count(*) FROM users u1 WHERE u1.tenant_id IN (SELECT o.tenant_id FROM orders o GROUP BY o.tenant_id HAVING count(*) > 2) AND u1.tenant_id = 'ivan'

SELECT u1.tenant_id, r.rn FROM users u1 JOIN (SELECT tenant_id, row_number() OVER (ORDER BY tenant_id, id) AS rn FROM users) r ON r.tenant_id = u1.tenant_id WHERE u1.tenant_id = 'ivan'

-- a WITH query over geo rows read twice

WITH q1 AS NOT MATERIALIZED (SELECT c2.code AS c1, c2.name AS c2, b1.price AS c3 FROM badges b1 LEFT JOIN currencies c2 ON b1.id = c2.digits) SELECT 'EUR' AS c1 FROM q1 w3 JOIN q1 w4 ON w3.c2 = w4.c2 AND w4.c1 IS NOT NULL

WITH q AS (SELECT tenant_id, total FROM orders) SELECT count(*) FROM q WHERE total > (SELECT avg(total) FROM q)

WITH q AS MATERIALIZED (SELECT tenant_id, currency FROM orders) SELECT a.currency, count(*) FROM q a JOIN q b ON a.currency = b.currency GROUP BY a.currency

-- a constant in GROUPING SETS over gathered rows (PostgreSQL before 18 nulls it by plan)

SELECT DISTINCT '2025-09-15 00:00:00+00'::timestamptz AS c1, u2.tenant_id AS c2, max(u2.country) AS c3 FROM orders o1 FULL JOIN users u2 ON o1.id = u2.age WHERE u2.tenant_id IN ('ivan', 'de vries') GROUP BY GROUPING SETS (('2025-09-15 00:00:00+00'::timestamptz, u2.tenant_id), (u2.tenant_id), ())

-- key spellings PostgreSQL reads as the key after a cast or padding (text against char(n), float8 against integer)

SELECT count(*) FROM users WHERE tenant_id = 'emma   '::char(10)

SELECT count(*) FROM users WHERE tenant_id::char(4) = 'ivan'

SELECT count(*) FROM users WHERE (tenant_id, id) IN (('emma', 1), ('ivan', 2))

SELECT count(*) FROM users WHERE (tenant_id, id) > ('ivan', 1)

SELECT count(*) FROM users WHERE tenant_id IS NOT DISTINCT FROM 'ivan'

SELECT count(*) FROM users WHERE CASE WHEN tenant_id = 'ivan' THEN true END

SELECT count(*) FROM users WHERE tenant_id = U&'iv\0061n'

SELECT count(*) FROM users WHERE tenant_id = 'iv' || 'an'

SELECT count(*) FROM users WHERE tenant_id = 'IVAN' COLLATE ci

-- int
SELECT count(*) FROM accounts WHERE acct = 4.9999999999999999::float8

-- int
SELECT count(*) FROM accounts WHERE acct = 5.0000000000000001

-- int
SELECT count(*) FROM accounts WHERE acct = 4.9999999::float4

-- int
SELECT count(*) FROM accounts WHERE acct IN (5, 5.0, 4.9999999999999999::float8)

-- int
SELECT count(*) FROM accounts WHERE acct = 11 / 2

-- int
SELECT count(*) FROM accounts WHERE acct = 0b101

-- ordered-set and statistical aggregates, FILTER, DISTINCT aggregates over every region

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders

SELECT currency, percentile_disc(0.25) WITHIN GROUP (ORDER BY total) FROM orders GROUP BY currency

SELECT rank('EUR') WITHIN GROUP (ORDER BY currency) FROM orders

SELECT stddev(total), variance(total), corr(age, id) FROM orders JOIN users USING (tenant_id) WHERE users.id = orders.user_id

SELECT avg(DISTINCT total), sum(DISTINCT total) FROM orders

SELECT count(*) FILTER (WHERE total > 100), sum(total) FILTER (WHERE status = 'open') FROM orders

SELECT jsonb_object_agg(tenant_id, cnt) FROM (SELECT tenant_id, count(*) AS cnt FROM users GROUP BY 1) s

SELECT n, count(*) FROM users, LATERAL unnest(ARRAY[age, id]) AS n GROUP BY n

SELECT generate_series(1, 2) AS g, count(*) FROM orders GROUP BY g

-- MERGE, ON CONFLICT and data-modifying WITH across regions

-- steps
BEGIN; MERGE INTO orders o USING currencies c ON o.currency = c.code AND o.tenant_id = 'ivan' WHEN MATCHED THEN UPDATE SET total = total + 1; SELECT sum(total) FROM orders; ROLLBACK

-- steps
BEGIN; INSERT INTO users (tenant_id, id, name) VALUES ('ivan', 1, 'dup'), ('emma', 1, 'dup2') ON CONFLICT DO NOTHING RETURNING tenant_id; SELECT count(*) FROM users; ROLLBACK

-- steps
BEGIN; WITH d AS (DELETE FROM orders WHERE tenant_id = 'ivan' RETURNING total) SELECT sum(total) FROM d; SELECT count(*) FROM orders; ROLLBACK

-- steps
SET TimeZone = 'America/New_York'; SELECT extract(hour FROM created_at) h, count(*) FROM orders GROUP BY 1 ORDER BY 1; RESET TimeZone

-- steps
SET IntervalStyle = 'iso_8601'; SELECT max(last_seen) - min(last_seen) FROM users; RESET IntervalStyle

-- key equalities that do not tie their sides: pairs kept with a null or by a negation

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE NOT (b1.tenant_id IN (SELECT b4.tenant_id FROM badges b4 WHERE b4.tenant_id = b2.tenant_id))

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE NOT EXISTS (SELECT 1 FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id)

SELECT b1.id, b2.id, (SELECT count(*) FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id) FROM badges b1 JOIN badges b2 ON b1.id = b2.id

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE b1.id > 2 OR EXISTS (SELECT 1 FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id)

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE b1.id > 2 OR b1.tenant_id IN (SELECT b4.tenant_id FROM badges b4 WHERE b4.tenant_id = b2.tenant_id)

SELECT b1.id, x.n FROM badges b1 JOIN badges b2 ON b1.id = b2.id, LATERAL (SELECT count(*) AS n FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id) x

SELECT b1.id, x.n FROM badges b1 JOIN badges b2 ON b1.id = b2.id LEFT JOIN LATERAL (SELECT b4.id AS n FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id) x ON true

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE EXISTS (SELECT 1 FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id)

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE b1.tenant_id IN (SELECT b4.tenant_id FROM badges b4 WHERE b4.tenant_id = b2.tenant_id)

SELECT b2.id AS c1 FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE (SELECT count(*) FROM badges b4 WHERE b4.tenant_id = b2.tenant_id AND b4.tenant_id = b1.tenant_id) = 0

SELECT b1.id, b2.id, b5.id FROM badges b1 JOIN badges b2 ON b1.id = b2.id LEFT JOIN badges b5 ON b5.tenant_id = b1.tenant_id AND b5.tenant_id = b2.tenant_id AND b5.id = b1.id

SELECT b1.id, b2.id FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE NOT EXISTS (SELECT 1 WHERE b1.tenant_id = b2.tenant_id)

SELECT b1.id, b2.id FROM badges b1 JOIN badges b2 ON b1.id = b2.id WHERE EXISTS (SELECT 1 FROM badges b4 LEFT JOIN badges b5 ON b5.tenant_id = b4.tenant_id AND b5.tenant_id = b2.tenant_id WHERE b4.tenant_id = b1.tenant_id)

SELECT b1.id, b2.id FROM badges b1 FULL JOIN badges b2 ON b1.id = b2.id AND b1.tenant_id = b2.tenant_id

SELECT b1.id, b2.id FROM badges b1 LEFT JOIN badges b2 ON b1.tenant_id = b2.tenant_id JOIN badges b3 ON b3.tenant_id = b2.tenant_id OR b3.id = b1.id

SELECT b2.id AS c1, b2.tags AS c2, b2.weight AS c3 FROM badges b1 JOIN badges b2 ON b1.id = b2.id CROSS JOIN generate_series(1, 3) AS g3(n) WHERE (b1.id >= 0) AND (b2.id > g3.n) AND (NOT (b1.tenant_id IN (SELECT b4.tenant_id AS c1 FROM badges b4 WHERE (b4.id = b1.id) AND ((b4.tenant_id = b2.tenant_id AND b4.tenant_id = 'emma')))))

