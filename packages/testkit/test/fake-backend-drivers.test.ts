import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/index.js";

const users = {
  columns: [
    { name: "id", typeOid: 23 },
    { name: "name", typeOid: 25 },
  ],
  rows: [
    [1, "ada"],
    [2, "grace"],
  ],
};

describe("FakeBackend with node-postgres", () => {
  let fake: FakeBackend;
  let client: pg.Client;

  beforeAll(async () => {
    fake = await FakeBackend.start({
      rules: [
        { match: "select id, name from users", reply: users },
        {
          match: /where id = \$1/i,
          reply: (_sql, _params, ctx) => ({
            columns: [{ name: "id", typeOid: 23 }],
            rows: [[Number(ctx.text(0))]],
          }),
        },
        { match: /^insert into users/i, reply: { tag: "INSERT 0 1" } },
        {
          match: /^select broken/i,
          reply: { error: { code: "42703", message: 'column "broken" does not exist' } },
        },
      ],
    });
    client = new pg.Client({ connectionString: fake.url() });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
    await fake.close();
  });

  it("answers a simple query with typed rows", async () => {
    const result = await client.query("select id, name from users");
    expect(result.rows).toEqual([
      { id: 1, name: "ada" },
      { id: 2, name: "grace" },
    ]);
    expect(result.command).toBe("SELECT");
    expect(result.rowCount).toBe(2);
  });

  it("binds parameters through the extended protocol", async () => {
    const result = await client.query("select id from users where id = $1", [7]);
    expect(result.rows).toEqual([{ id: 7 }]);
    const recorded = fake.statements.at(-1)!;
    expect(recorded.protocol).toBe("extended");
    expect(recorded.params).toEqual(["7"]);
  });

  it("parses a named statement once and binds it again on reuse", async () => {
    const query = { name: "by-id", text: "select id from users where id = $1" };
    expect((await client.query({ ...query, values: [5] })).rows).toEqual([{ id: 5 }]);
    expect((await client.query({ ...query, values: [6] })).rows).toEqual([{ id: 6 }]);
    expect(fake.statements.slice(-2).map((statement) => statement.params)).toEqual([["5"], ["6"]]);
  });

  it("reports a scripted error with its SQLSTATE and recovers on the same connection", async () => {
    await expect(client.query("select broken")).rejects.toMatchObject({ code: "42703" });
    await expect(client.query("select broken where x = $1", [1])).rejects.toMatchObject({ code: "42703" });
    const after = await client.query("SELECT 1");
    expect(after.rows).toEqual([{ "?column?": 1 }]);
  });

  it("tracks a transaction and aborts it after an error until ROLLBACK", async () => {
    await client.query("BEGIN");
    await client.query("insert into users values (3, 'linus')");
    await expect(client.query("select broken")).rejects.toMatchObject({ code: "42703" });
    await expect(client.query("SELECT 1")).rejects.toMatchObject({ code: "25P02" });
    const rollback = await client.query("ROLLBACK");
    expect(rollback.command).toBe("ROLLBACK");
    expect((await client.query("SELECT 1")).rowCount).toBe(1);
  });

  it("answers statements nothing scripts with 0A000", async () => {
    await expect(client.query("select * from nowhere")).rejects.toMatchObject({ code: "0A000" });
  });
});

describe("FakeBackend with postgres.js", () => {
  let fake: FakeBackend;
  let sql: postgres.Sql;

  beforeAll(async () => {
    fake = await FakeBackend.start({
      handler: (text, _params, ctx) => {
        if (/from users/i.test(text)) return users;
        if (/^select \$1::int \+ 1/i.test(text)) {
          return { columns: [{ name: "n", typeOid: 23 }], rows: [[Number(ctx.text(0)) + 1]] };
        }
        if (/^update users/i.test(text)) return { tag: "UPDATE 2" };
        return undefined;
      },
    });
    sql = postgres(fake.url(), { max: 1, onnotice: () => {} });
  });

  afterAll(async () => {
    await sql.end();
    await fake.close();
  });

  it("runs a parameterised query through the extended protocol", async () => {
    const rows = await sql`select ${41}::int + 1 as n`;
    expect(rows).toEqual([{ n: 42 }]);
    expect(rows.count).toBe(1);
  });

  it("runs a multi-statement simple query", async () => {
    const results = await sql.unsafe("select id, name from users; update users set name = name; select 1");
    expect(results[0]).toEqual([
      { id: 1, name: "ada" },
      { id: 2, name: "grace" },
    ]);
    expect(results[1]).toEqual([{ "?column?": 1 }]);
    expect(fake.statements.slice(-3).map((statement) => statement.protocol)).toEqual([
      "simple",
      "simple",
      "simple",
    ]);
  });

  it("commits a transaction block and sees BEGIN and COMMIT", async () => {
    const before = fake.statements.length;
    const updated = await sql.begin(async (tx) => tx`update users set name = 'x'`);
    expect(updated.count).toBe(2);
    const seen = fake.statements.slice(before).map((statement) => statement.sql.toLowerCase());
    expect(seen[0]).toBe("begin");
    expect(seen.at(-1)).toBe("commit");
  });

  it("rolls back when the transaction callback throws", async () => {
    const before = fake.statements.length;
    await expect(
      sql.begin(async (tx) => {
        await tx`update users set name = 'y'`;
        throw new Error("abandon");
      }),
    ).rejects.toThrow("abandon");
    expect(fake.statements.slice(before).at(-1)?.sql.toLowerCase()).toBe("rollback");
  });

  it("reports errors with their SQLSTATE and keeps the connection usable", async () => {
    await expect(sql`select * from missing_table`).rejects.toMatchObject({ code: "0A000" });
    expect(await sql`select id, name from users`).toHaveLength(2);
  });
});
