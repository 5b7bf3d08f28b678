import { encodeQuery } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { preparedAnywhere, referencePair, rowsSorted } from "./support/reference-pair.js";

// Writes that read rows of other regions (a sub-query over them, UPDATE ... FROM or DELETE ...
// USING a table spread over regions, INSERT ... SELECT from everywhere): the proxy reads those
// rows first, exactly as a SELECT would be answered, then runs the write with them as constants.
// Each exchange is compared message for message with one database holding every row.
const world = referencePair();

/**
 * The same messages as the reference, RETURNING rows as a multiset: one server returns them in
 * its scan order, a write over regions region after region (docs/transactions.md).
 */
async function same(sql: string): Promise<string[]> {
  const [expected, got] = await world.pair.both(encodeQuery({ sql }));
  const ordered = /\bORDER BY\b/i.test(sql) && !/\bRETURNING\b/i.test(sql);
  expect(ordered ? got : rowsSorted(got), sql).toEqual(ordered ? expected : rowsSorted(expected));
  return got;
}

/** The write inside a block, a read of what it changed, then ROLLBACK and the read again. */
async function inRolledBackBlock(write: string, read: string): Promise<string[]> {
  await same("BEGIN");
  const answer = await same(write);
  await same(read);
  await same("ROLLBACK");
  await same(read);
  return answer;
}

describe("writes that read rows of other regions", () => {
  it("sets a value from a sub-query over every region (a count), in the key's region", async () => {
    const answer = await inRolledBackBlock(
      "UPDATE users SET age = (SELECT count(*) FROM orders) WHERE tenant_id = 'alice' RETURNING tenant_id, id, age",
      "SELECT tenant_id, id, age FROM users ORDER BY tenant_id, id",
    );
    expect(answer.at(-2)).toBe("CommandComplete UPDATE 3");
  });

  it("filters by a sub-query's aggregate over every region, outside a block, committed in two phases", async () => {
    await same(
      "UPDATE orders SET status = 'big' WHERE total > (SELECT avg(total) FROM orders) RETURNING tenant_id, id, total",
    );
    await same("SELECT tenant_id, id, status FROM orders ORDER BY tenant_id, id");
    await same(
      "UPDATE orders SET status = CASE WHEN id % 2 = 0 THEN 'open' ELSE 'paid' END WHERE status = 'big'",
    );
    expect(await preparedAnywhere(world.regions)).toBe(0);
  });

  it("answers UPDATE ... FROM a sub-query grouped by a column that is not the key", async () => {
    await inRolledBackBlock(
      "UPDATE orders o SET total = s.m FROM (SELECT status, max(total) AS m FROM orders GROUP BY status) s WHERE s.status = o.status RETURNING o.tenant_id, o.id, o.total",
      "SELECT tenant_id, id, total FROM orders ORDER BY tenant_id, id",
    );
  });

  it("answers DELETE ... USING a table joined on a column that is not the key", async () => {
    await inRolledBackBlock(
      "DELETE FROM orders o USING users u WHERE u.id = o.buyer AND u.age > 40 RETURNING o.tenant_id, o.id",
      "SELECT count(*), sum(total) FROM orders",
    );
  });

  it("copies rows of other regions with INSERT ... SELECT, each row to its key's region", async () => {
    const answer = await inRolledBackBlock(
      "INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status, created_at) SELECT CASE tenant_id WHEN 'alice' THEN 'bob' ELSE 'alice' END, id + 100, user_id, buyer, currency, total, status, created_at FROM orders WHERE tenant_id IN ('alice', 'chandra') AND id < 3 RETURNING tenant_id, id, total",
      "SELECT tenant_id, id, total FROM orders WHERE id > 100 ORDER BY tenant_id, id",
    );
    expect(answer).toContain("CommandComplete INSERT 0 4");
  });

  it("writes every copy of a replicated table from a sub-query over one region's rows", async () => {
    await inRolledBackBlock(
      "UPDATE currencies SET digits = 3 WHERE code IN (SELECT currency FROM orders WHERE tenant_id = 'bob' AND total > 0) RETURNING code, digits",
      "SELECT code, digits FROM currencies ORDER BY code",
    );
  });

  it("gives a sub-query's own errors, and PostgreSQL's 21000 for a scalar sub-query with several rows", async () => {
    await same("BEGIN");
    expect(
      (
        await same("UPDATE users SET age = (SELECT age FROM users WHERE id = 1) WHERE tenant_id = 'alice'")
      )[0],
    ).toBe("ErrorResponse 21000");
    await same("ROLLBACK");
    expect(
      (
        await same(
          "UPDATE users SET age = (SELECT 1 / (count(*) - count(*)) FROM orders) WHERE tenant_id = 'alice'",
        )
      )[0],
    ).toBe("ErrorResponse 22012");
    await same("SELECT tenant_id, id, age FROM users ORDER BY tenant_id, id");
  });

  it("keeps a sub-query's empty answer typed (NULL, and NOT IN over no rows)", async () => {
    await inRolledBackBlock(
      "UPDATE users SET age = (SELECT max(age) FROM users WHERE tenant_id = 'nobody'), name = name || '!' WHERE tenant_id = 'bob' AND id NOT IN (SELECT buyer FROM orders WHERE total < 0) RETURNING tenant_id, id, age, name",
      "SELECT tenant_id, id, age, name FROM users ORDER BY tenant_id, id",
    );
  });

  it("still refuses a sub-query correlated with the written row across regions", async () => {
    const [error] = await world.pair
      .both(
        encodeQuery({
          sql: "UPDATE users u SET age = (SELECT count(*) FROM orders o WHERE o.buyer = u.id) WHERE tenant_id = 'alice'",
        }),
      )
      .then(([, got]) => got);
    expect(error).toBe("ErrorResponse 0A000");
  });

  it("inside a block, refuses a correlated one with 0A000 (not 25P02) and fails the block, as before", async () => {
    await same("BEGIN");
    const [, got] = await world.pair.both(
      encodeQuery({
        sql: "UPDATE users u SET age = (SELECT count(*) FROM orders o WHERE o.buyer = u.id) WHERE tenant_id = 'alice'",
      }),
    );
    expect(got).toEqual(["ErrorResponse 0A000", "ReadyForQuery E"]);
    const [, next] = await world.pair.both(encodeQuery({ sql: "SELECT 1" }));
    expect(next[0]).toBe("ErrorResponse 25P02");
    await same("ROLLBACK");
  });

  it("reads the block's own earlier writes first, in every region it reads", async () => {
    await same("BEGIN");
    await same(
      "INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status, created_at) VALUES ('bob', 900, 1, 1, 'EUR', 99999.50, 'open', '2026-01-01 00:00:00+00')",
    );
    await same(
      "UPDATE users SET age = (SELECT max(total)::int FROM orders) WHERE tenant_id = 'alice' RETURNING tenant_id, id, age",
    );
    await same("ROLLBACK");
  });
});
