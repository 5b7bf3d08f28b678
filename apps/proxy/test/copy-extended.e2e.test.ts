import {
  type BackendMessage,
  encodeBind,
  encodeCopyData,
  encodeCopyDone,
  encodeCopyFail,
  encodeExecute,
  encodeFlush,
  encodeParse,
  encodeQuery,
  encodeSync,
  PgError,
} from "@geo/proto";
import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { describeMessage } from "./support/side-by-side.js";

// COPY sent with Parse/Bind/Execute, as some drivers send every statement. PostgreSQL accepts it:
// the Execute enters copy-in (or copy-out) mode, and in copy-in mode it ignores Sync and Flush, so
// a driver that sends Sync behind the Execute gets its ReadyForQuery only for the Sync after
// CopyDone. Through geoproxy such a COPY either behaves exactly so (one region holds the rows) or
// is refused with 0A000 before anything is sent anywhere (the rows would have to be split).

let regions: RealRegions;
let one: OneRegion;

beforeAll(async () => {
  regions = await startRealRegions();
  one = await startOneRegion({ initSql: "CREATE TABLE items (id int4 PRIMARY KEY, label text);" });
});
afterAll(async () => {
  await regions?.close();
  await one?.close();
});

/** How the client orders its messages around the COPY data. */
type Order = "sync-first" | "flush" | "all-at-once";

function portal(sql: string): Buffer {
  return Buffer.concat([
    encodeParse({ name: "", sql, paramTypes: [] }),
    encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
    encodeExecute({ portal: "", maxRows: 0 }),
  ]);
}

/** Reads messages until `readies` ReadyForQuery (or until one of the `stopAt` messages). */
async function read(
  client: RawClient,
  readies: number,
  stopAt: readonly string[] = [],
): Promise<BackendMessage[]> {
  const out: BackendMessage[] = [];
  while (readies > 0) {
    const message = await client.next();
    out.push(message);
    if (stopAt.includes(message.type)) return out;
    if (message.type === "ReadyForQuery") readies--;
  }
  return out;
}

/**
 * An extended-protocol COPY FROM STDIN of `data`, then a simple SELECT 1 to show the session goes
 * on: every message the server sent, as lines, and the errors in full.
 */
async function copyFromExtended(
  target: { host: string; port: number },
  sql: string,
  data: string,
  order: Order,
  options: { end?: "done" | "fail"; before?: string; after?: string } = {},
): Promise<{ lines: string[]; errors: PgError[] }> {
  const client = await RawClient.connect({
    ...target,
    user: "postgres",
    database: "postgres",
    timeoutMs: 5_000,
  });
  const end = options.end === "fail" ? encodeCopyFail({ message: "client gave up" }) : encodeCopyDone();
  const copy = Buffer.concat([encodeCopyData({ data: Buffer.from(data) }), end, encodeSync()]);
  const messages: BackendMessage[] = [];
  try {
    if (options.before !== undefined) {
      client.send(encodeQuery({ sql: options.before }));
      messages.push(...(await read(client, 1)));
    }
    switch (order) {
      case "sync-first": {
        // The Sync behind the Execute is ignored in copy-in mode: no ReadyForQuery for it.
        client.send(Buffer.concat([portal(sql), encodeSync()]));
        messages.push(...(await read(client, 1, ["CopyInResponse"])));
        // Refused instead: the data and the second Sync, sent anyway, give one more ReadyForQuery.
        client.send(copy);
        messages.push(...(await read(client, 1)));
        break;
      }
      case "flush": {
        client.send(Buffer.concat([portal(sql), encodeFlush()]));
        // No Sync yet: a refusal comes without its ReadyForQuery.
        messages.push(...(await read(client, 1, ["CopyInResponse", "ErrorResponse"])));
        client.send(copy);
        messages.push(...(await read(client, 1)));
        break;
      }
      case "all-at-once": {
        client.send(Buffer.concat([portal(sql), encodeSync(), copy]));
        const first = await read(client, 1);
        messages.push(...first);
        // Accepted: one ReadyForQuery (the first Sync was ignored). Refused: one for each Sync.
        if (!first.some((message) => message.type === "CopyInResponse"))
          messages.push(...(await read(client, 1)));
        break;
      }
    }
    client.send(encodeQuery({ sql: options.after ?? "SELECT 1" }));
    messages.push(...(await read(client, 1)));
  } finally {
    await client.close().catch(() => undefined);
  }
  return {
    lines: messages.map(describeMessage),
    errors: messages.flatMap((message) =>
      message.type === "ErrorResponse" ? [PgError.fromFields(message.fields)] : [],
    ),
  };
}

const SELECT_ONE = [
  "RowDescription ?column?:23",
  'DataRow ["1"]',
  "CommandComplete SELECT 1",
  "ReadyForQuery I",
];
const proxyOf = (port: number) => ({ host: "127.0.0.1", port });

async function countIn(region: RegionName, sql: string): Promise<number> {
  return (await regions.direct[region].query(sql)).rows[0].n as number;
}

describe("COPY FROM STDIN through the extended protocol, one region holding the rows", () => {
  const orders: Order[] = ["sync-first", "flush", "all-at-once"];

  for (const [index, order] of orders.entries()) {
    it(`loads a pinned table as PostgreSQL does (${order})`, async () => {
      const action = `extended-${order}`;
      const sql = "COPY eu_audit (tenant_id, action) FROM STDIN";
      const data = `alice\t${action}\nbob\t${action}\n`;
      const got = await copyFromExtended(proxyOf(regions.proxy.port), sql, data, order);
      // PostgreSQL's own answer, from eu-west's server, under another action (deleted after).
      const expected = await copyFromExtended(
        regions.cluster.servers[0]!,
        sql,
        data.replaceAll(action, `${action}-direct`),
        order,
      );
      await regions.direct["eu-west"].query("DELETE FROM eu_audit WHERE action = $1", [`${action}-direct`]);
      expect(got.lines).toEqual(expected.lines);
      expect(got.lines).toEqual([
        "ParseComplete",
        "BindComplete",
        "CopyInResponse",
        "CommandComplete COPY 2",
        "ReadyForQuery I",
        ...SELECT_ONE,
      ]);
      const sqlCount = `SELECT count(*)::int AS n FROM eu_audit WHERE action = '${action}'`;
      expect(await countIn("eu-west", sqlCount), String(index)).toBe(2);
      expect(await countIn("us-east", sqlCount)).toBe(0);
      expect(await countIn("ap-south", sqlCount)).toBe(0);
    });
  }

  it("answers a row PostgreSQL rejects mid-copy as PostgreSQL does, and loads none of it", async () => {
    const sql = "COPY eu_audit (tenant_id, action) FROM STDIN";
    const data = "alice\textended-bad\nbob\n";
    for (const order of orders) {
      const got = await copyFromExtended(proxyOf(regions.proxy.port), sql, data, order);
      const expected = await copyFromExtended(regions.cluster.servers[0]!, sql, data, order);
      expect(got.lines, order).toEqual(expected.lines);
      expect(got.errors.map((error) => error.code)).toEqual(["22P04"]);
    }
    expect(
      await countIn("eu-west", "SELECT count(*)::int AS n FROM eu_audit WHERE action = 'extended-bad'"),
    ).toBe(0);
  });

  it("answers the client's CopyFail as PostgreSQL does, and loads nothing", async () => {
    const sql = "COPY eu_audit (tenant_id, action) FROM STDIN";
    for (const order of orders) {
      const data = "alice\textended-failed\n";
      const got = await copyFromExtended(proxyOf(regions.proxy.port), sql, data, order, { end: "fail" });
      const expected = await copyFromExtended(regions.cluster.servers[0]!, sql, data, order, { end: "fail" });
      expect(got.lines, order).toEqual(expected.lines);
      expect(got.errors.map((error) => error.code)).toEqual(["57014"]);
    }
    expect(
      await countIn("eu-west", "SELECT count(*)::int AS n FROM eu_audit WHERE action = 'extended-failed'"),
    ).toBe(0);
  });

  it("joins a transaction block: ROLLBACK undoes it, COMMIT keeps it, as on PostgreSQL", async () => {
    const sql = "COPY eu_audit (tenant_id, action) FROM STDIN";
    for (const [order, after] of [
      ["sync-first", "ROLLBACK"],
      ["all-at-once", "COMMIT"],
    ] as const) {
      const action = `extended-block-${after}`;
      const options = { before: "BEGIN", after };
      const got = await copyFromExtended(
        proxyOf(regions.proxy.port),
        sql,
        `bob\t${action}\n`,
        order,
        options,
      );
      const expected = await copyFromExtended(
        regions.cluster.servers[0]!,
        sql,
        `bob\t${action}-direct\n`,
        order,
        options,
      );
      expect(got.lines, order).toEqual(expected.lines);
      expect(got.lines).toContain("ReadyForQuery T");
      await regions.direct["eu-west"].query("DELETE FROM eu_audit WHERE action = $1", [`${action}-direct`]);
    }
    const count = (action: string) =>
      countIn("eu-west", `SELECT count(*)::int AS n FROM eu_audit WHERE action = '${action}'`);
    expect(await count("extended-block-ROLLBACK")).toBe(0);
    expect(await count("extended-block-COMMIT")).toBe(1);
  });

  it("answers an Execute PostgreSQL refuses before copy-in as PostgreSQL does", async () => {
    for (const order of ["sync-first", "all-at-once"] as const) {
      const sql = "COPY eu_audit (no_such_column) FROM STDIN";
      const got = await copyFromExtended(proxyOf(regions.proxy.port), sql, "x\n", order);
      const expected = await copyFromExtended(regions.cluster.servers[0]!, sql, "x\n", order);
      expect(got.lines, order).toEqual(expected.lines);
      expect(got.errors.map((error) => error.code)).toEqual(["42703"]);
    }
  });

  it("loads any table of a one-region deployment as PostgreSQL does", async () => {
    for (const [i, order] of orders.entries()) {
      const sql = "COPY items FROM STDIN (FORMAT csv)";
      const proxied = await copyFromExtended(proxyOf(one.proxy.port), sql, `${i * 2 + 1},"a,b"\n`, order);
      const direct = await copyFromExtended(one.direct, sql, `${i * 2 + 2},"a,b"\n`, order);
      expect(proxied.lines, order).toEqual(direct.lines);
      expect(proxied.lines).toContain("CommandComplete COPY 1");
    }
    const client = await RawClient.connect({ ...one.direct, user: "postgres", database: "postgres" });
    const { rows } = await client.query("SELECT count(*) FROM items WHERE label = 'a,b'");
    await client.close();
    expect(rows).toEqual([["6"]]);
  });

  it("writes a pinned table's COPY TO STDOUT as PostgreSQL does", async () => {
    const sql = "COPY (SELECT tenant_id, action FROM eu_audit ORDER BY id) TO STDOUT (FORMAT csv)";
    const run = async (target: { host: string; port: number }) => {
      const client = await RawClient.connect({ ...target, user: "postgres", database: "postgres" });
      client.send(Buffer.concat([portal(sql), encodeSync()]));
      const lines = (await read(client, 1)).map(describeMessage);
      await client.close();
      return lines;
    };
    const got = await run(proxyOf(regions.proxy.port));
    expect(got).toEqual(await run(regions.cluster.servers[0]!));
    expect(got.slice(0, 3)).toEqual(["ParseComplete", "BindComplete", "CopyOutResponse"]);
    expect(got).toContain('CopyData "alice,login\\n"');
  });
});

describe("COPY through the extended protocol, rows in several regions", () => {
  const heldRows = async (id: number) => {
    let total = 0;
    for (const region of REGIONS)
      total += await countIn(region, `SELECT count(*)::int AS n FROM users WHERE id = ${id}`);
    return total;
  };

  for (const [index, order] of (["sync-first", "flush", "all-at-once"] as const).entries()) {
    it(`refuses COPY FROM STDIN into a geo-partitioned table with 0A000 and a hint, loading nothing (${order})`, async () => {
      const id = 950 + index;
      const got = await copyFromExtended(
        proxyOf(regions.proxy.port),
        "COPY users (tenant_id, id, name) FROM STDIN",
        `alice\t${id}\ta\nbob\t${id}\tb\nchandra\t${id}\tc\n`,
        order,
      );
      // Refused at Bind, before any CopyInResponse: the data that follows is dropped, as
      // PostgreSQL drops CopyData outside a COPY; each Sync is answered.
      expect(got.lines.slice(0, 3)).toEqual(["ParseComplete", "ErrorResponse 0A000", "ReadyForQuery I"]);
      expect(got.lines).not.toContain("CopyInResponse");
      expect(got.lines.slice(-SELECT_ONE.length)).toEqual(SELECT_ONE);
      expect(got.errors).toHaveLength(1);
      expect(got.errors[0]!.hint).toMatch(/simple query/);
      expect(await heldRows(id)).toBe(0);
    });
  }

  it("refuses a region-hinted COPY FROM STDIN too: the hint cannot vouch for rows it has not read", async () => {
    const got = await copyFromExtended(
      proxyOf(regions.proxy.port),
      "/* geo: region=us-east */ COPY users (tenant_id, id, name) FROM STDIN",
      "bob\t960\tb\n",
      "all-at-once",
    );
    expect(got.errors.map((error) => error.code)).toEqual(["0A000"]);
    expect(got.errors[0]!.hint).toMatch(/simple query/);
    expect(await heldRows(960)).toBe(0);
  });

  it("refuses COPY FROM STDIN into a replicated table without a writer, loading no copy", async () => {
    const got = await copyFromExtended(
      proxyOf(regions.proxy.port),
      "COPY currencies (code, name) FROM STDIN",
      "JPY\tYen\n",
      "all-at-once",
    );
    expect(got.errors.map((error) => error.code)).toEqual(["0A000"]);
    expect(got.errors[0]!.hint).toMatch(/simple query/);
    for (const region of REGIONS)
      expect(
        await countIn(region, "SELECT count(*)::int AS n FROM currencies WHERE code = 'JPY'"),
        region,
      ).toBe(0);
  });

  it("refuses COPY TO STDOUT of rows in several regions with 0A000 and a hint", async () => {
    const client = await RawClient.connect({
      ...proxyOf(regions.proxy.port),
      user: "postgres",
      database: "postgres",
    });
    client.send(Buffer.concat([portal("COPY users (tenant_id, id) TO STDOUT"), encodeSync()]));
    const messages = await read(client, 1);
    await client.close();
    expect(messages.map(describeMessage)).toEqual([
      "ParseComplete",
      "ErrorResponse 0A000",
      "ReadyForQuery I",
    ]);
    const error = PgError.fromFields(
      (messages[1] as Extract<BackendMessage, { type: "ErrorResponse" }>).fields,
    );
    expect(error.hint).toMatch(/simple query/);
  });
});
