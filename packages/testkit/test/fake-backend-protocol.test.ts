import { connect, type Socket } from "node:net";
import {
  BackendFramer,
  type BackendMessage,
  decodeBackendMessage,
  encodeBind,
  encodeDescribe,
  encodeExecute,
  encodeFlush,
  encodeParse,
  encodeStartupMessage,
  encodeSync,
  isProtocolFault,
  ProtocolVersion,
} from "@geo/proto";
import pg from "pg";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { FakeBackend, RawClient, splitStatements } from "../src/index.js";

const fakes: FakeBackend[] = [];

async function startFake(options: Parameters<typeof FakeBackend.start>[0] = {}): Promise<FakeBackend> {
  const fake = await FakeBackend.start(options);
  fakes.push(fake);
  return fake;
}

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function readUntilReady(client: RawClient): Promise<BackendMessage[]> {
  const messages: BackendMessage[] = [];
  for (;;) {
    const message = await client.next();
    messages.push(message);
    if (message.type === "ReadyForQuery") return messages;
  }
}

const threeRows = { columns: [{ name: "n", typeOid: 23 }], rows: [[1], [2], [3]] };

function bind(portal = "", statement = "") {
  return encodeBind({ portal, statement, paramFormats: [], params: [], resultFormats: [] });
}

describe("FakeBackend extended protocol", () => {
  it("suspends a portal at the row limit and resumes it", async () => {
    const fake = await startFake({ rules: [{ match: "select n from three", reply: threeRows }] });
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "select n from three", paramTypes: [] }),
        bind(),
        encodeDescribe({ target: "P", name: "" }),
        encodeExecute({ portal: "", maxRows: 2 }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const messages = await readUntilReady(client);
    expect(messages.map((message) => message.type)).toEqual([
      "ParseComplete",
      "BindComplete",
      "RowDescription",
      "DataRow",
      "DataRow",
      "PortalSuspended",
      "DataRow",
      "CommandComplete",
      "ReadyForQuery",
    ]);
    expect(messages.at(-2)).toMatchObject({ type: "CommandComplete", tag: "SELECT 1" });
    await client.close();
  });

  it("discards messages after an error until Sync and reports the failed transaction", async () => {
    const fake = await startFake({
      rules: [{ match: "select boom", reply: { error: { code: "22012", message: "division by zero" } } }],
    });
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    expect((await client.query("BEGIN")).status).toBe("T");
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "select boom", paramTypes: [] }),
        bind(),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeParse({ name: "", sql: "SELECT 1", paramTypes: [] }),
        bind(),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const messages = await readUntilReady(client);
    expect(messages.map((message) => message.type)).toEqual([
      "ParseComplete",
      "BindComplete",
      "ErrorResponse",
      "ReadyForQuery",
    ]);
    expect(messages[2]).toMatchObject({ fields: { code: "22012" } });
    expect(messages[3]).toMatchObject({ status: "E" });
    const inFailed = await client.query("SELECT 1");
    expect(inFailed.error?.code).toBe("25P02");
    expect((await client.query("ROLLBACK")).status).toBe("I");
    expect(fake.statements.map((statement) => statement.sql)).toEqual([
      "BEGIN",
      "select boom",
      "SELECT 1",
      "ROLLBACK",
    ]);
    await client.close();
  });

  it("describes a named statement with its parameter types and answers Flush without Sync", async () => {
    const fake = await startFake({
      rules: [{ match: /^select n from three where n < \$1/, reply: threeRows }],
    });
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    client.send(
      Buffer.concat([
        encodeParse({ name: "s1", sql: "select n from three where n < $1 and n > $2", paramTypes: [23] }),
        encodeDescribe({ target: "S", name: "s1" }),
        encodeFlush(),
      ]),
    );
    expect((await client.next()).type).toBe("ParseComplete");
    expect(await client.next()).toMatchObject({ type: "ParameterDescription", typeOids: [23, 25] });
    expect(await client.next()).toMatchObject({
      type: "RowDescription",
      fields: [{ name: "n", typeOid: 23 }],
    });
    client.send(encodeParse({ name: "s1", sql: "select 2", paramTypes: [] }));
    client.send(encodeSync());
    const duplicate = await readUntilReady(client);
    expect(duplicate[0]).toMatchObject({ type: "ErrorResponse", fields: { code: "42P05" } });
    await client.close();
  });

  it("refuses a second portal of the same name (42P03) and an unknown statement (26000)", async () => {
    const fake = await startFake();
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "SELECT 1", paramTypes: [] }),
        bind("p1"),
        bind("p1"),
        encodeSync(),
        bind("", "missing"),
        encodeSync(),
      ]),
    );
    const first = await readUntilReady(client);
    expect(first.map((message) => message.type)).toEqual([
      "ParseComplete",
      "BindComplete",
      "ErrorResponse",
      "ReadyForQuery",
    ]);
    expect(first[2]).toMatchObject({ fields: { code: "42P03" } });
    const second = await readUntilReady(client);
    expect(second[0]).toMatchObject({ type: "ErrorResponse", fields: { code: "26000" } });
    await client.close();
  });

  it("reports SET of a reported setting with ParameterStatus and SHOW reads it back", async () => {
    const fake = await startFake();
    const client = await RawClient.connect({ host: fake.host, port: fake.port, user: "alice" });
    expect(client.parameters["server_version"]).toBe("15.8");
    expect(client.parameters["integer_datetimes"]).toBe("on");
    await client.query("SET application_name = 'geo-test'");
    expect(client.parameters["application_name"]).toBe("geo-test");
    expect((await client.query("SHOW application_name")).rows).toEqual([["geo-test"]]);
    await client.query("DISCARD ALL");
    expect(client.parameters["application_name"]).toBe("");
    await client.close();
  });
});

describe("FakeBackend notices and notifications", () => {
  it("sends scripted notices before the result", async () => {
    const fake = await startFake({
      rules: [
        { match: "select noisy", reply: { ...threeRows, notices: [{ code: "01000", message: "careful" }] } },
      ],
    });
    const client = new pg.Client({ connectionString: fake.url() });
    const notices: { code?: string | undefined; message?: string | undefined }[] = [];
    client.on("notice", (notice) => notices.push(notice));
    await client.connect();
    expect((await client.query("select noisy")).rowCount).toBe(3);
    expect(notices).toMatchObject([{ code: "01000", message: "careful", severity: "NOTICE" }]);
    await client.end();
  });

  it("delivers NOTIFY and notify() to sessions that LISTEN on the channel", async () => {
    const fake = await startFake();
    const listener = new pg.Client({ connectionString: fake.url() });
    const sender = new pg.Client({ connectionString: fake.url() });
    await listener.connect();
    await sender.connect();
    const received: { channel: string; payload?: string | undefined }[] = [];
    const arrived = new Promise<void>((resolve) => {
      listener.on("notification", (notification) => {
        received.push({ channel: notification.channel, payload: notification.payload });
        if (received.length === 2) resolve();
      });
    });
    await listener.query('LISTEN "Orders"');
    await sender.query(`NOTIFY "Orders", 'it''s here'`);
    fake.notify("Orders", "from the test");
    fake.notify("other", "not listened to");
    await arrived;
    expect(received).toEqual([
      { channel: "Orders", payload: "it's here" },
      { channel: "Orders", payload: "from the test" },
    ]);
    expect([...fake.connections[0]!.channels]).toEqual(["Orders"]);
    await listener.end();
    await sender.end();
  });
});

describe("FakeBackend startup and authentication", () => {
  it("answers a protocol 3.2 request with protocol options with NegotiateProtocolVersion", async () => {
    const fake = await startFake();
    const socket = await new Promise<Socket>((resolve) => {
      const s = connect(fake.port, fake.host, () => resolve(s));
    });
    const framer = new BackendFramer();
    const first = new Promise<BackendMessage>((resolve) => {
      socket.on("data", (chunk: Buffer) => {
        framer.push(chunk);
        const frame = framer.next();
        if (frame !== null && !isProtocolFault(frame)) {
          const message = decodeBackendMessage(frame);
          if (!isProtocolFault(message)) resolve(message);
        }
      });
    });
    socket.write(
      encodeStartupMessage({
        protocolVersion: ProtocolVersion.v3_2,
        parameters: { user: "alice", "_pq_.test_option": "on" },
      }),
    );
    expect(await first).toEqual({
      type: "NegotiateProtocolVersion",
      newestMinor: 0,
      unrecognizedOptions: ["_pq_.test_option"],
    });
    socket.destroy();
  });

  it("refuses SSL with 'N' and lets a client that prefers SSL continue in clear", async () => {
    const fake = await startFake();
    const sql = postgres(fake.url(), { max: 1, ssl: "prefer", onnotice: () => {} });
    expect(await sql`select 1`).toEqual([{ "?column?": 1 }]);
    await sql.end();
  });

  it("logs node-postgres and postgres.js in with the right SCRAM-SHA-256 password", async () => {
    const fake = await startFake({ auth: { method: "scram-sha-256", password: "s3cret" } });
    const client = new pg.Client({ connectionString: fake.url("alice", "postgres", "s3cret") });
    await client.connect();
    expect((await client.query("SELECT 1")).rowCount).toBe(1);
    await client.end();
    const sql = postgres(fake.url("bob", "postgres", "s3cret"), { max: 1, onnotice: () => {} });
    expect(await sql`select 1`).toHaveLength(1);
    await sql.end();
    const raw = await RawClient.connect({
      host: fake.host,
      port: fake.port,
      user: "carol",
      password: "s3cret",
    });
    expect(raw.authMethod).toBe("scram-sha-256");
    expect(raw.serverVerified).toBe(true);
    await raw.close();
  });

  it("refuses a wrong SCRAM-SHA-256 password with 28P01 and closes the connection", async () => {
    const fake = await startFake({ auth: { method: "scram-sha-256", password: "s3cret" } });
    const client = new pg.Client({ connectionString: fake.url("alice", "postgres", "wrong") });
    await expect(client.connect()).rejects.toMatchObject({ code: "28P01" });
    const sql = postgres(fake.url("alice", "postgres", "wrong"), { max: 1, onnotice: () => {} });
    await expect(sql`select 1`).rejects.toMatchObject({ code: "28P01" });
    await sql.end();
    expect(fake.statements).toEqual([]);
  });
});

describe("splitStatements", () => {
  it("splits at top-level semicolons only", () => {
    expect(
      splitStatements("select ';' as a; select $x$;$x$ -- c;\n; /* a ; /* nested ; */ */ select \"a;b\"; ;"),
    ).toEqual(["select ';' as a", "select $x$;$x$ -- c;", '/* a ; /* nested ; */ */ select "a;b"']);
  });
});
