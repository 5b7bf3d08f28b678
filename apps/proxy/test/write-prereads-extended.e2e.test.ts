import {
  encodeBind,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  encodeQuery,
  encodeSync,
  type FormatCode,
} from "@geo/proto";
import { describe, expect, it } from "vitest";
import { preparedAnywhere, referencePair, rowsSorted } from "./support/reference-pair.js";
import { sideBySide } from "./support/side-by-side.js";

// Writes that read rows of other regions, prepared and bound (the extended protocol, as every
// driver sends them): the reads run with the bound values, then the write with their answers.
// Each exchange is compared message for message with one database holding every row.
const world = referencePair();

async function same(bytes: Buffer, readies = 1): Promise<string[]> {
  const [expected, got] = await world.pair.both(bytes, readies);
  expect(rowsSorted(got)).toEqual(rowsSorted(expected));
  return got;
}

const query = (sql: string): Buffer => encodeQuery({ sql });

interface Bound {
  readonly sql: string;
  readonly name?: string;
  readonly paramTypes?: number[];
  readonly params: (string | Buffer | null)[];
  readonly formats?: FormatCode[];
}

/** Parse (unless `parsed`), Bind, Describe portal, Execute, as drivers send a statement. */
function statement(bound: Bound, parsed = false): Buffer[] {
  const name = bound.name ?? "";
  const messages: Buffer[] = [];
  if (!parsed) messages.push(encodeParse({ name, sql: bound.sql, paramTypes: bound.paramTypes ?? [] }));
  messages.push(
    encodeBind({
      portal: "",
      statement: name,
      paramFormats: bound.formats ?? [],
      params: bound.params.map((value) => (typeof value === "string" ? Buffer.from(value) : value)),
      resultFormats: [],
    }),
    encodeDescribe({ target: "P", name: "" }),
    encodeExecute({ portal: "", maxRows: 0 }),
  );
  return messages;
}

const batch = (...parts: Buffer[][]): Buffer => Buffer.concat([...parts.flat(), encodeSync()]);

/**
 * A batch failed by a read's error, as PostgreSQL fails it, or one message earlier: PostgreSQL
 * binds the write and fails its Execute; the proxy runs the reads at Bind, so an error of a read
 * takes the place of BindComplete (and the Describe before the Execute is skipped with it). An
 * error the rewritten write raises itself (a scalar sub-query's rows) comes where PostgreSQL's does.
 */
async function sameFailure(bytes: Buffer): Promise<string> {
  const [expected, got] = await world.pair.both(bytes);
  const failure = (lines: string[]) => lines.filter((line) => line.startsWith("ErrorResponse"));
  expect(failure(got)).toEqual(failure(expected));
  expect(got.at(-1)).toBe(expected.at(-1));
  if (got.length !== expected.length)
    expect(got.slice(0, 2)).toEqual(["ParseComplete", failure(expected)[0]]);
  else expect(got).toEqual(expected);
  return failure(got)[0]!;
}

const USERS = query("SELECT tenant_id, id, age, name FROM users ORDER BY tenant_id, id");
const ORDERS = query("SELECT tenant_id, id, total, status FROM orders ORDER BY tenant_id, id");

describe("prepared writes that read rows of other regions", () => {
  it("sets a value from a sub-query over every region, with the key and a filter bound as text", async () => {
    await same(query("BEGIN"));
    const got = await same(
      batch(
        statement({
          sql: "UPDATE users SET age = (SELECT count(*) FROM orders WHERE total > $2) WHERE tenant_id = $1 RETURNING tenant_id, id, age",
          params: ["alice", "10"],
        }),
      ),
    );
    expect(got).toContain("CommandComplete UPDATE 3");
    await same(USERS);
    await same(query("ROLLBACK"));
    await same(USERS);
  });

  it("runs a read that names no parameter without the client's values (untyped key)", async () => {
    await same(query("BEGIN"));
    const got = await same(
      batch(
        statement({
          sql: "UPDATE users SET age = (SELECT max(age) FROM users) WHERE tenant_id = $1 RETURNING tenant_id, id, age",
          params: ["bob"],
        }),
      ),
    );
    expect(got).toContain("CommandComplete UPDATE 3");
    await same(USERS);
    await same(query("ROLLBACK"));
  });

  it("runs a named statement twice outside a block, each time committed in two phases", async () => {
    const sql =
      "UPDATE orders SET status = $1 WHERE total > (SELECT avg(total) FROM orders WHERE status <> $1) RETURNING tenant_id, id, total";
    await same(batch(statement({ sql, name: "big", params: ["big"] })));
    await same(ORDERS);
    await same(batch(statement({ sql, name: "big", params: ["huge"] }, true)));
    await same(ORDERS);
    await same(
      query(
        "UPDATE orders SET status = CASE WHEN id % 2 = 0 THEN 'open' ELSE 'paid' END WHERE status IN ('big', 'huge')",
      ),
    );
    expect(await preparedAnywhere(world.regions)).toBe(0);
  });

  it("reads a value bound in binary with no type given (the type learnt from the server)", async () => {
    const age = Buffer.alloc(4);
    age.writeInt32BE(40);
    await same(query("BEGIN"));
    await same(
      batch(
        statement({
          sql: "DELETE FROM orders o USING users u WHERE u.id = o.buyer AND u.age > $1 RETURNING o.tenant_id, o.id",
          params: [age],
          formats: [1],
        }),
      ),
    );
    await same(ORDERS);
    await same(query("ROLLBACK"));
  });

  it("copies rows with INSERT ... SELECT bound to a parameter, each row to its key's region", async () => {
    await same(query("BEGIN"));
    const got = await same(
      batch(
        statement({
          sql: "INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status, created_at) SELECT CASE tenant_id WHEN 'alice' THEN 'bob' ELSE 'alice' END, id + $1, user_id, buyer, currency, total, status, created_at FROM orders WHERE tenant_id IN ('alice', 'chandra') AND id < 3 RETURNING tenant_id, id, total",
          paramTypes: [23],
          params: ["100"],
        }),
      ),
    );
    expect(got).toContain("CommandComplete INSERT 0 4");
    await same(ORDERS);
    await same(query("ROLLBACK"));
    await same(ORDERS);
  });

  it("fails the batch with a read's own error, skips to Sync, and answers the next batch", async () => {
    const error = await sameFailure(
      batch(
        statement({
          sql: "UPDATE users SET age = (SELECT $1::int / (count(*) - count(*)) FROM orders) WHERE tenant_id = 'alice'",
          params: ["1"],
        }),
        statement({ sql: "SELECT count(*) FROM users", params: [] }),
      ),
    );
    expect(error).toBe("ErrorResponse 22012");
    await same(batch(statement({ sql: "SELECT count(*) FROM users", params: [] })));
    await same(USERS);
  });

  it("inside a block, a read's error fails the block as PostgreSQL's would", async () => {
    await same(query("BEGIN"));
    try {
      const error = await sameFailure(
        batch(
          statement({
            sql: "UPDATE users SET age = (SELECT age FROM users WHERE id = $1) WHERE tenant_id = 'alice'",
            params: ["1"],
          }),
        ),
      );
      expect(error).toBe("ErrorResponse 21000");
      expect((await same(query("SELECT 1")))[0]).toBe("ErrorResponse 25P02");
    } finally {
      await same(query("ROLLBACK"));
    }
  });

  it("outside a block, keeps the refusal when the batch already ran a statement before it", async () => {
    const [, got] = await world.pair.both(
      batch(
        statement({ sql: "SELECT count(*) FROM users WHERE tenant_id = $1", params: ["alice"] }),
        statement({
          // A write that changes nothing, so the reference (which runs it) stays as the regions.
          sql: "UPDATE users SET age = age + 0 * (SELECT count(*) FROM orders) WHERE tenant_id = $1",
          params: ["alice"],
        }),
      ),
    );
    expect(got).toContain("ErrorResponse 0A000");
    await same(USERS);
  });

  it("pipelines the write and a read of what it changed in one batch of a block", async () => {
    await same(query("BEGIN"));
    await same(
      batch(
        statement({
          sql: "UPDATE users SET age = (SELECT max(total)::int FROM orders WHERE status = $1) WHERE tenant_id = 'bob' RETURNING tenant_id, id, age",
          name: "set_age",
          params: ["open"],
        }),
        statement({
          sql: "SELECT tenant_id, id, age FROM users WHERE tenant_id = $1 ORDER BY id",
          params: ["bob"],
        }),
      ),
    );
    await same(query("ROLLBACK"));
    await same(USERS);
  });

  it("in a session held by its connection (an advisory lock), reads there and elsewhere", async () => {
    const held = await sideBySide(world.regions.cluster.servers[0]!, world.regions.proxy.port, {
      directDatabase: "reference",
    });
    try {
      const both = async (bytes: Buffer): Promise<string[]> => {
        const [expected, got] = await held.both(bytes);
        expect(rowsSorted(got)).toEqual(rowsSorted(expected));
        return got;
      };
      await both(query("SELECT pg_advisory_lock(4242)"));
      for (const tenant of ["alice", "bob", "chandra"]) {
        await both(
          batch(
            statement(
              {
                sql: "UPDATE users SET age = age + 0 * (SELECT count(*) FROM orders WHERE total > $2) WHERE tenant_id = $1 RETURNING tenant_id, id, age",
                name: "touch",
                params: [tenant, "5"],
              },
              tenant !== "alice",
            ),
          ),
        );
      }
      await both(query("SELECT pg_advisory_unlock(4242)"));
      await both(query("SELECT tenant_id, id, age FROM users ORDER BY tenant_id, id"));
    } finally {
      await held.close();
    }
  });
});
