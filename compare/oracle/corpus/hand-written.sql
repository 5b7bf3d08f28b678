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

