import pg from "pg";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { FakeBackend, RawClient } from "../src/index.js";

const fakes: FakeBackend[] = [];

async function startFake(options: Parameters<typeof FakeBackend.start>[0] = {}): Promise<FakeBackend> {
  const fake = await FakeBackend.start(options);
  fakes.push(fake);
  return fake;
}

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 3000; waited += 10) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

const fiveRows = {
  columns: [{ name: "n", typeOid: 23 }],
  rows: [[1], [2], [3], [4], [5]],
};

describe("FakeBackend failure injection", () => {
  it("refuses PREPARE TRANSACTION with 55000 and ends the transaction", async () => {
    const fake = await startFake({
      unknownStatements: "empty",
      failures: { refusePrepareTransaction: true },
    });
    const client = new pg.Client({ connectionString: fake.url() });
    await client.connect();
    await client.query("BEGIN");
    await client.query("insert into t values (1)");
    await expect(client.query("PREPARE TRANSACTION 'geo_1'")).rejects.toMatchObject({ code: "55000" });
    expect((await client.query("SELECT 1")).rowCount).toBe(1);
    expect(fake.preparedTransactions.size).toBe(0);
    await client.end();
  });

  it("refuses PREPARE TRANSACTION with a chosen SQLSTATE once injected at run time", async () => {
    const fake = await startFake({ unknownStatements: "empty" });
    const client = new pg.Client({ connectionString: fake.url() });
    await client.connect();
    await client.query("BEGIN");
    await client.query("PREPARE TRANSACTION 'before'");
    expect([...fake.preparedTransactions]).toEqual(["before"]);
    const stop = fake.inject({ refusePrepareTransaction: "40001" });
    await client.query("BEGIN");
    await expect(client.query("PREPARE TRANSACTION 'during'")).rejects.toMatchObject({ code: "40001" });
    stop();
    await client.query("BEGIN");
    await client.query("PREPARE TRANSACTION 'after'");
    expect([...fake.preparedTransactions].sort()).toEqual(["after", "before"]);
    await client.end();
  });

  it("drops the connection after PREPARE TRANSACTION took effect, and a new session can commit it", async () => {
    const fake = await startFake({
      unknownStatements: "empty",
      failures: { dropAfterPrepareTransaction: true },
    });
    const sql = postgres(fake.url(), { max: 1, onnotice: () => {} });
    await sql.unsafe("BEGIN");
    await expect(sql.unsafe("PREPARE TRANSACTION 'geo_2'")).rejects.toMatchObject({
      code: "CONNECTION_CLOSED",
    });
    expect([...fake.preparedTransactions]).toEqual(["geo_2"]);
    // postgres.js waits forever to end a pool whose only connection died inside a manual BEGIN.
    await sql.end({ timeout: 0 });

    const recovery = new pg.Client({ connectionString: fake.url() });
    await recovery.connect();
    expect((await recovery.query("select gid from pg_prepared_xacts")).rows).toEqual([{ gid: "geo_2" }]);
    await recovery.query("COMMIT PREPARED 'geo_2'");
    expect(fake.preparedTransactions.size).toBe(0);
    await expect(recovery.query("COMMIT PREPARED 'geo_2'")).rejects.toMatchObject({ code: "42704" });
    await recovery.end();
  });

  it("stalls a matching statement until the client cancels it (57014)", async () => {
    const fake = await startFake({ failures: { stallOn: /^select slow/i } });
    fake.addRule({ match: /^select slow/i, reply: fiveRows });
    const sql = postgres(fake.url(), { max: 1, onnotice: () => {} });
    const pending = sql`select slow`.execute();
    const outcome = Promise.race([
      pending.then(() => "answered"),
      fake
        .received(/^select slow/i)
        .then(() => new Promise((resolve) => setTimeout(() => resolve("stalled"), 100))),
    ]);
    expect(await outcome).toBe("stalled");
    pending.cancel();
    await expect(pending).rejects.toMatchObject({ code: "57014" });
    expect(await sql`select 1`).toEqual([{ "?column?": 1 }]);
    await sql.end();
  });

  it("closes the connection after the given number of DataRows", async () => {
    const fake = await startFake({
      rules: [{ match: "select n from five", reply: fiveRows }],
      failures: { closeMidResult: { match: "select n from five", afterRows: 2 } },
    });
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    await expect(client.query("select n from five")).rejects.toThrow(/closed/);
    const raw = await RawClient.connect({ host: fake.host, port: fake.port, user: "bob" });
    raw.send(Buffer.from([0x51, 0, 0, 0, 4 + 18 + 1, ...Buffer.from("select n from five"), 0]));
    const types: string[] = [];
    await expect(
      (async () => {
        for (;;) types.push((await raw.next()).type);
      })(),
    ).rejects.toThrow(/closed/);
    expect(types).toEqual(["RowDescription", "DataRow", "DataRow"]);
    const pgClient = new pg.Client({ connectionString: fake.url() });
    pgClient.on("error", () => {});
    await pgClient.connect();
    await expect(pgClient.query("select n from five")).rejects.toThrow();
    await eventually(() => fake.openConnections === 0, "all connections closed");
  });

  it("answers after a scripted delay, and a cancel cuts the delay short", async () => {
    const fake = await startFake({
      rules: [{ match: "select later", reply: { ...fiveRows, delayMs: 30_000 } }],
    });
    const sql = postgres(fake.url(), { max: 1, onnotice: () => {} });
    const pending = sql`select later`.execute();
    await fake.received("select later");
    pending.cancel();
    await expect(pending).rejects.toMatchObject({ code: "57014" });
    fake.addRule({ match: "select soon", reply: { ...fiveRows, delayMs: 20 } });
    expect(await sql`select soon`).toHaveLength(5);
    await sql.end();
  });

  it("ends every session with FATAL 57P01 on terminateConnections", async () => {
    const fake = await startFake();
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    fake.terminateConnections();
    const message = await client.next();
    expect(message.type).toBe("ErrorResponse");
    expect(message.type === "ErrorResponse" && message.fields.code).toBe("57P01");
    await client.closedByServer();
    await eventually(() => fake.openConnections === 0, "the session closed");
  });

  it("counts open connections and records statements per connection", async () => {
    const fake = await startFake({ unknownStatements: "empty" });
    const first = new pg.Client({ connectionString: fake.url() });
    const second = new pg.Client({ connectionString: fake.url("bob", "shop") });
    await first.connect();
    await second.connect();
    expect(fake.openConnections).toBe(2);
    await first.query("select 'from first'");
    await second.query("select 'from second' where x = $1", ["y"]);
    const [one, two] = fake.connections;
    expect(fake.statementsOf(one!.id).map((statement) => statement.sql)).toEqual(["select 'from first'"]);
    expect(fake.statementsOf(two!.id)).toMatchObject([
      { sql: "select 'from second' where x = $1", params: ["y"], protocol: "extended" },
    ]);
    expect(two!.user).toBe("bob");
    expect(two!.database).toBe("shop");
    await first.end();
    await eventually(() => fake.openConnections === 1, "one connection left");
    await second.end();
    await eventually(() => fake.openConnections === 0, "no connection left");
  });
});
