import { beforeAll, describe, expect, it } from "vitest";
import { initSql, type PrereadAnswer, writePrereads } from "../src/index.js";

beforeAll(initSql);

const count: PrereadAnswer = { columns: [{ name: "count", type: "bigint" }], rows: [["42"]] };

describe("writePrereads", () => {
  it.each([
    [
      "an expression sub-query",
      "UPDATE users SET age = (SELECT count(*) FROM orders) WHERE tenant_id = 'a'",
      [["subquery", "SELECT count(*) FROM orders"]],
    ],
    [
      "a derived table of UPDATE ... FROM",
      "UPDATE orders o SET total = s.m FROM (SELECT status, max(total) AS m FROM orders GROUP BY status) s WHERE s.status = o.status",
      [["subquery", "SELECT status, max(total) AS m FROM orders GROUP BY status"]],
    ],
    [
      "a table of DELETE ... USING, and a sub-query in its WHERE",
      "DELETE FROM orders o USING users u WHERE u.id = o.buyer AND o.total > (SELECT avg(total) FROM orders)",
      [
        ["table", "SELECT * FROM users"],
        ["subquery", "SELECT avg(total) FROM orders"],
      ],
    ],
    [
      "tables on both sides of a join in UPDATE ... FROM",
      "UPDATE orders o SET total = 1 FROM users u JOIN currencies c ON c.code = u.country WHERE u.id = o.buyer",
      [
        ["table", "SELECT * FROM users"],
        ["table", "SELECT * FROM currencies"],
      ],
    ],
    [
      "the source of INSERT ... SELECT",
      "INSERT INTO orders (tenant_id, id) SELECT tenant_id, id + 1 FROM orders WHERE total > 5",
      [["insert-source", "SELECT tenant_id, id + 1 FROM orders WHERE total > 5"]],
    ],
    [
      "a sub-query inside INSERT ... VALUES",
      "INSERT INTO users (tenant_id, id) VALUES ('a', (SELECT max(id) FROM users))",
      [["subquery", "SELECT max(id) FROM users"]],
    ],
    [
      "only the outermost of nested sub-queries",
      "UPDATE users SET age = 1 WHERE id IN (SELECT user_id FROM orders WHERE total > (SELECT avg(total) FROM orders))",
      [["subquery", "SELECT user_id FROM orders WHERE total > ((SELECT avg(total) FROM orders))"]],
    ],
  ])("reads %s first", (_name, text, reads) => {
    expect(writePrereads(text)?.reads.map((read) => [read.role, read.sql])).toEqual(reads);
  });

  it.each([
    ["a write reading no other table", "UPDATE users SET age = age + 1 WHERE tenant_id = 'a'"],
    ["a sub-query over no table", "UPDATE users SET age = (SELECT 1) WHERE tenant_id = 'a'"],
    ["INSERT ... VALUES", "INSERT INTO users (tenant_id, id) VALUES ('a', 1)"],
    [
      "a WITH clause (a sub-query may name its queries)",
      "WITH x AS (SELECT 1 AS id) UPDATE users SET age = 1 WHERE id IN (SELECT id FROM x)",
    ],
    [
      "a LATERAL derived table",
      "UPDATE users u SET age = 1 FROM orders o, LATERAL (SELECT o.total) t WHERE o.buyer = u.id",
    ],
    ["a table with column aliases", "DELETE FROM orders o USING users AS u(t, i) WHERE u.i = o.buyer"],
    ["a SELECT", "SELECT count(*) FROM orders"],
  ])("has nothing to read first for %s", (_name, text) => {
    expect(writePrereads(text)).toBeUndefined();
  });

  it("writes the answer in as typed constants in their order, under the answer's column names", () => {
    const p = writePrereads("UPDATE users SET age = (SELECT count(*) FROM orders) WHERE tenant_id = 'a'")!;
    expect(p.render([count])).toBe(
      "UPDATE users SET age = (SELECT v.count FROM ( VALUES (CAST('42' AS bigint), 1) ) AS v(count, __geo_ordinal) ORDER BY v.__geo_ordinal) WHERE tenant_id = 'a'",
    );
  });

  it("keeps an empty answer typed: one row of typed NULLs filtered out", () => {
    const p = writePrereads("UPDATE users SET age = 1 WHERE id NOT IN (SELECT buyer FROM orders)")!;
    expect(p.render([{ columns: [{ name: "buyer", type: "bit(4)" }], rows: [] }])).toBe(
      "UPDATE users SET age = 1 WHERE NOT (id IN (SELECT v.buyer FROM ( VALUES (CAST(NULL AS pg_catalog.bit(4)), 1) ) AS v(buyer, __geo_ordinal) WHERE false ORDER BY v.__geo_ordinal))",
    );
  });

  it("quotes values and renames columns whose names repeat", () => {
    const p = writePrereads(
      "UPDATE users SET name = 'x' WHERE (name, country) IN (SELECT name, name FROM users)",
    )!;
    const sql = p.render([
      {
        columns: [
          { name: "name", type: "text" },
          { name: "name", type: "text" },
        ],
        rows: [["it's", null]],
      },
    ]);
    expect(sql).toContain(
      "SELECT v.c1, v.c2 FROM ( VALUES ('it''s'::text, NULL::text, 1) ) AS v(c1, c2, __geo_ordinal)",
    );
  });

  it("replaces a FROM table by its rows under its alias, and an INSERT source by VALUES", () => {
    const del = writePrereads("DELETE FROM orders o USING users u WHERE u.id = o.buyer")!;
    expect(del.render([{ columns: [{ name: "id", type: "bigint" }], rows: [["1"], ["2"]] }])).toBe(
      "DELETE FROM orders AS o USING ( SELECT v.id FROM ( VALUES (CAST('1' AS bigint), 1), (CAST('2' AS bigint), 2) ) AS v(id, __geo_ordinal) ORDER BY v.__geo_ordinal ) AS u WHERE u.id = o.buyer",
    );
    const insert = writePrereads(
      "INSERT INTO users (tenant_id, id) SELECT tenant_id, id FROM users WHERE id < 3",
    )!;
    const answer: PrereadAnswer = {
      columns: [
        { name: "tenant_id", type: "text" },
        { name: "id", type: "bigint" },
      ],
      rows: [
        ["a", "1"],
        ["b", "2"],
      ],
    };
    expect(insert.render([answer])).toBe(
      "INSERT INTO users (tenant_id, id) VALUES ('a'::text, CAST('1' AS bigint)), ('b'::text, CAST('2' AS bigint))",
    );
  });
});
