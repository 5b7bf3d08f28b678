import {
  type BackendMessage,
  encodeBind,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  encodeStartupMessage,
  encodeSync,
} from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, REGIONS, type RegionName, startFakeRegions } from "./support/fake-regions.js";
import { WireClient } from "./support/wire.js";

let regions: FakeRegions;

beforeAll(async () => {
  const options = {
    unknownStatements: "empty" as const,
    rules: [
      { match: /fails/i, reply: { error: { code: "22012" as const, message: "division by zero" } } },
      {
        match: /^select .*tenant_id = \$1/i,
        reply: (_sql: string, _p: unknown, ctx: { text(i: number): string | null }) => ({
          columns: ["tenant_id"],
          rows: [[ctx.text(0)]],
        }),
      },
    ],
  };
  regions = await startFakeRegions({ "eu-west": options, "us-east": options, "ap-south": options });
});
afterAll(() => regions.close());

async function session(): Promise<WireClient> {
  const client = await WireClient.connect(regions.proxy.port);
  client.send(encodeStartupMessage({ parameters: { user: "app" } }));
  await client.untilReady();
  return client;
}

function types(messages: BackendMessage[]): string[] {
  return messages.map((m) => (m.type === "ErrorResponse" ? `Error ${m.fields.code}` : m.type));
}

function ranIn(marker: RegExp): RegionName[] {
  return REGIONS.filter((region) => regions.fakes[region].statements.some((s) => marker.test(s.sql)));
}

const text = (value: string) => Buffer.from(value);

describe("extended protocol", () => {
  it("discards the rest of a batch after a backend error, until Sync", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({
          name: "",
          sql: "SELECT 1 FROM users WHERE tenant_id = 'bob' AND fails",
          paramTypes: [],
        }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeParse({ name: "later", sql: "SELECT 2 FROM users WHERE tenant_id = 'bob'", paramTypes: [] }),
        encodeBind({ portal: "", statement: "later", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toEqual([
      "ParseComplete",
      "BindComplete",
      "Error 22012",
      "ReadyForQuery",
    ]);
    // The Parse after the error never happened, as on one server.
    client.send(
      Buffer.concat([
        encodeBind({ portal: "", statement: "later", paramFormats: [], params: [], resultFormats: [] }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toEqual(["Error 26000", "ReadyForQuery"]);
    client.close();
  });

  it("answers a syntax error at Parse and skips to Sync", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "SELEC 1", paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toEqual(["Error 42601", "ReadyForQuery"]);
    client.close();
  });

  it("answers two pipelined batches in order, each with its own ReadyForQuery", async () => {
    const client = await session();
    const batch = (key: string) => [
      encodeParse({ name: "", sql: "SELECT tenant_id FROM users WHERE tenant_id = $1", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [text(key)], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ];
    client.send(Buffer.concat([...batch("alice"), ...batch("bob"), ...batch("chandra")]));
    const rows: string[] = [];
    for (let i = 0; i < 3; i++) {
      const messages = await client.untilReady();
      expect(types(messages)).toEqual([
        "ParseComplete",
        "BindComplete",
        "DataRow",
        "CommandComplete",
        "ReadyForQuery",
      ]);
      const row = messages.find((m) => m.type === "DataRow") as { values: readonly (Buffer | null)[] };
      rows.push(row.values[0]!.toString());
    }
    expect(rows).toEqual(["alice", "bob", "chandra"]);
    client.close();
  });

  it("routes by a key bound in binary when its type is declared", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({
          name: "",
          sql: "SELECT tenant_id FROM users WHERE tenant_id = $1 /* bin */",
          paramTypes: [25],
        }),
        encodeBind({
          portal: "",
          statement: "",
          paramFormats: [1],
          params: [text("chandra")],
          resultFormats: [],
        }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toContain("DataRow");
    expect(ranIn(/\/\* bin \*\//)).toEqual(["ap-south"]);
    client.close();
  });

  it("describes a statement before Bind from a region that holds its tables", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({ name: "s", sql: "SELECT tenant_id FROM users WHERE tenant_id = $1", paramTypes: [] }),
        encodeDescribe({ target: "S", name: "s" }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toEqual([
      "ParseComplete",
      "ParameterDescription",
      "RowDescription",
      "ReadyForQuery",
    ]);
    client.close();
  });

  it("refuses a statement spanning regions at Bind and skips the rest of the batch", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "SELECT * FROM users FOR UPDATE", paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    expect(types(await client.untilReady())).toEqual(["ParseComplete", "Error 0A000", "ReadyForQuery"]);
    client.close();
  });

  it("commits a batch outside a transaction that writes in two regions in two phases at Sync", async () => {
    const client = await session();
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: "UPDATE users SET name = 'x' WHERE tenant_id = $1", paramTypes: [] }),
        encodeBind({
          portal: "",
          statement: "",
          paramFormats: [],
          params: [text("alice")],
          resultFormats: [],
        }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [text("bob")], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const answer = types(await client.untilReady());
    expect(answer).toEqual([
      "ParseComplete",
      "BindComplete",
      "CommandComplete",
      "BindComplete",
      "CommandComplete",
      "ReadyForQuery",
    ]);
    for (const region of ["eu-west", "us-east"] as const) {
      const sent = regions.fakes[region].statements.map((statement) => statement.sql);
      expect(
        sent.some((sql) => /^PREPARE TRANSACTION/.test(sql)),
        region,
      ).toBe(true);
      expect(
        sent.some((sql) => /^COMMIT PREPARED/.test(sql)),
        region,
      ).toBe(true);
    }
    client.close();
  });

  it("runs BEGIN and COMMIT sent as extended statements, with exact transaction status", async () => {
    const client = await session();
    const run = (sql: string, params: Buffer[] = []) => [
      encodeParse({ name: "", sql, paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params, resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
      encodeSync(),
    ];
    client.send(Buffer.concat(run("BEGIN")));
    expect((await client.untilReady()).at(-1)).toEqual({ type: "ReadyForQuery", status: "T" });
    client.send(Buffer.concat(run("SELECT tenant_id FROM users WHERE tenant_id = $1", [text("bob")])));
    expect((await client.untilReady()).at(-1)).toEqual({ type: "ReadyForQuery", status: "T" });
    client.send(Buffer.concat(run("COMMIT")));
    const commit = await client.untilReady();
    expect(types(commit)).toEqual(["ParseComplete", "BindComplete", "CommandComplete", "ReadyForQuery"]);
    expect(commit.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    client.close();
  });
});
