import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeCancelRequest, encodeCopyData, encodeCopyDone, encodeCopyFail, encodeQuery } from "@geo/proto";
import { findPostgresBinaries, type RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { describeMessage, exchange, type SideBySide, sideBySide } from "./support/side-by-side.js";
import { txnSection } from "./support/txn-data-dir.js";

// COPY ... FROM STDIN into tables whose rows live in several regions: each row goes to its key's
// region, all regions commit together, and the answer is the one a server holding every row gives.
const SCHEMA = `
CREATE TABLE loads (
  tenant_id text NOT NULL,
  id        int4 NOT NULL,
  note      text,
  qty       int8,
  tag       uuid,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE codes (code text PRIMARY KEY, label text);
CREATE TABLE priced (tenant_id numeric PRIMARY KEY, label text);
CREATE TABLE counters (k int8 PRIMARY KEY, v text);
CREATE TABLE rates (code text PRIMARY KEY, rate numeric);`;

const TOML = `
[[tables]]
table = "loads"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "priced"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "counters"
placement = "geo_partitioned"
key = "k"

[[tables]]
table = "rates"
placement = "global_replicated"
writer = "us-east"

[[tables]]
table = "codes"
placement = "global_replicated"
`;

let regions: RealRegions;
let pair: SideBySide;
let psqlPath: string;
const scratch = mkdtempSync(join(tmpdir(), "geo-copy-"));

beforeAll(async () => {
  regions = await startRealRegions(`${TOML}${txnSection()}`);
  for (const region of REGIONS) await regions.direct[region].query(SCHEMA);
  await regions.reference.query(SCHEMA);
  pair = await sideBySide(regions.cluster.servers[0]!, regions.proxy.port, { directDatabase: "reference" });
  const { bindir } = findPostgresBinaries();
  psqlPath = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
});
afterAll(async () => {
  await pair?.close();
  await regions?.close();
});

/** Sends a COPY FROM STDIN, then `chunks` as CopyData messages and CopyDone (or CopyFail). */
async function copyIn(
  client: RawClient,
  sql: string,
  chunks: readonly Buffer[],
  end: "done" | "fail" = "done",
): Promise<string[]> {
  client.send(encodeQuery({ sql }));
  const first = describeMessage(await client.next());
  if (first !== "CopyInResponse") return [first, ...(await exchange(client, Buffer.alloc(0)))];
  const data = chunks.map((chunk) => encodeCopyData({ data: chunk }));
  const last = end === "done" ? encodeCopyDone() : encodeCopyFail({ message: "client gave up" });
  return [first, ...(await exchange(client, Buffer.concat([...data, last])))];
}

/** The same COPY into the reference database and through the proxy: both answers. */
async function bothCopy(sql: string, chunks: readonly Buffer[], end: "done" | "fail" = "done") {
  const expected = await copyIn(pair.direct, sql, chunks, end);
  const got = await copyIn(pair.proxied, sql, chunks, end);
  return { expected, got };
}

/** Cuts `text` into pieces at awkward places: inside fields, quotes, escapes and line ends. */
function pieces(text: string | Buffer, size = 7): Buffer[] {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

async function same(sql: string): Promise<string[]> {
  const [expected, got] = await pair.both(encodeQuery({ sql }));
  expect(got, sql).toEqual(expected);
  return got;
}

/** Each region's rows of `loads` for the given ids, read straight from its server. */
async function held(ids: string): Promise<Record<RegionName, string[]>> {
  const out = {} as Record<RegionName, string[]>;
  for (const region of REGIONS) {
    const result = await regions.direct[region].query(
      `SELECT tenant_id || ':' || id AS row FROM loads WHERE id IN (${ids}) ORDER BY tenant_id, id`,
    );
    out[region] = result.rows.map((row) => row.row as string);
  }
  return out;
}

async function preparedEverywhere(): Promise<number> {
  let total = 0;
  for (const region of REGIONS) {
    const result = await regions.direct[region].query("SELECT count(*)::int AS n FROM pg_prepared_xacts");
    total += result.rows[0].n as number;
  }
  return total;
}

describe("COPY FROM STDIN across regions", () => {
  it("places each text row in its key's region, with escapes, NULLs and rows cut across messages", async () => {
    const data = [
      "alice\t101\ttab\\there\t5\t\\N",
      "bob\t101\tline\\nbreak\t\\N\ta0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
      "chandra\t101\tback\\\\slash \\x41\\101\t-7\t\\N",
      "dmitri\t101\t\\N\t9223372036854775807\t\\N",
      "newcomer\t101\tplaced where INSERT would put it\t1\t\\N",
      "",
    ].join("\n");
    const { expected, got } = await bothCopy("COPY loads FROM STDIN", pieces(data));
    expect(got).toEqual(expected);
    expect(got).toEqual(["CopyInResponse", "CommandComplete COPY 5", "ReadyForQuery I"]);
    expect(await held("101")).toEqual({
      "eu-west": ["alice:101", "dmitri:101", "newcomer:101"],
      "us-east": ["bob:101"],
      "ap-south": ["chandra:101"],
    });
    await same("SELECT tenant_id, id, note, qty, tag FROM loads WHERE id = 101 ORDER BY tenant_id");
    await same("SELECT note FROM loads WHERE tenant_id = 'newcomer'");
    expect(await preparedEverywhere()).toBe(0);
  });

  it("reads CSV with HEADER, quoted delimiters and line ends, NULL markers, ESCAPE and FORCE_NULL", async () => {
    const sql =
      "COPY loads (id, tenant_id, note, qty) FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER ';', NULL 'nil', ESCAPE '\\', FORCE_NULL (note))";
    const data = [
      "id;tenant_id;note;qty",
      '102;"alice";"semi;colon";1',
      '102;"bob";"two\nlines, and \\"quotes\\"";nil',
      "102;chandra;nil;3",
      '102;"farah";"nil";4',
      '102;george;"";5',
    ].join("\r\n");
    const { expected, got } = await bothCopy(sql, pieces(data, 5));
    expect(got).toEqual(expected);
    expect(got).toContain("CommandComplete COPY 5");
    expect(await held("102")).toEqual({
      "eu-west": ["alice:102"],
      "us-east": ["bob:102", "george:102"],
      "ap-south": ["chandra:102", "farah:102"],
    });
    await same("SELECT tenant_id, note, note IS NULL, qty FROM loads WHERE id = 102 ORDER BY tenant_id");
  });

  it("loads binary COPY data keyed by text, with int4, int8, uuid and NULL fields", async () => {
    const rows: [string, number, string | null, bigint | null, string | null][] = [
      ["alice", 103, "binary", 42n, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"],
      ["bob", 103, null, -1n, null],
      ["hiro", 103, "ü", null, "00000000-0000-0000-0000-000000000001"],
    ];
    const parts: Buffer[] = [Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)];
    const field = (bytes: Buffer | null): void => {
      const length = Buffer.alloc(4);
      length.writeInt32BE(bytes === null ? -1 : bytes.length);
      parts.push(length);
      if (bytes !== null) parts.push(bytes);
    };
    for (const [tenant, id, note, qty, tag] of rows) {
      parts.push(Buffer.from([0, 5]));
      field(Buffer.from(tenant));
      const int4 = Buffer.alloc(4);
      int4.writeInt32BE(id);
      field(int4);
      field(note === null ? null : Buffer.from(note));
      let int8: Buffer | null = null;
      if (qty !== null) {
        int8 = Buffer.alloc(8);
        int8.writeBigInt64BE(qty);
      }
      field(int8);
      field(tag === null ? null : Buffer.from(tag.replaceAll("-", ""), "hex"));
    }
    parts.push(Buffer.from([0xff, 0xff]));
    const { expected, got } = await bothCopy(
      "COPY loads FROM STDIN WITH (FORMAT binary)",
      pieces(Buffer.concat(parts), 3),
    );
    expect(got).toEqual(expected);
    expect(got).toContain("CommandComplete COPY 3");
    expect(await held("103")).toEqual({
      "eu-west": ["alice:103"],
      "us-east": ["bob:103"],
      "ap-south": ["hiro:103"],
    });
    await same("SELECT tenant_id, note, qty, tag FROM loads WHERE id = 103 ORDER BY tenant_id");
  });

  it("routes binary rows keyed by int8 as INSERT routes the same keys", async () => {
    const parts: Buffer[] = [Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)];
    const keys = [1n, 2n, 3n, 42n, -9n, 9_000_000_000n];
    for (const key of keys) {
      parts.push(Buffer.from([0, 2, 0, 0, 0, 8]));
      const int8 = Buffer.alloc(8);
      int8.writeBigInt64BE(key);
      parts.push(int8, Buffer.from([0, 0, 0, 1]), Buffer.from("b"));
    }
    parts.push(Buffer.from([0xff, 0xff]));
    const lines = await copyIn(
      pair.proxied,
      "COPY counters FROM STDIN (FORMAT binary)",
      pieces(Buffer.concat(parts), 5),
    );
    expect(lines).toEqual(["CopyInResponse", "CommandComplete COPY 6", "ReadyForQuery I"]);
    for (const key of keys) {
      // Where INSERT would have put it: a keyed read goes to that one region and finds the row.
      const found = await exchange(
        pair.proxied,
        encodeQuery({ sql: `SELECT v FROM counters WHERE k = ${key}` }),
      );
      expect(found, String(key)).toContain('DataRow ["b"]');
      let holders = 0;
      for (const region of REGIONS) {
        const result = await regions.direct[region].query(
          "SELECT count(*)::int AS n FROM counters WHERE k = $1",
          [String(key)],
        );
        holders += result.rows[0].n as number;
      }
      expect(holders, String(key)).toBe(1);
    }
    // The directory lists keys "1", "2" and "3" in three different regions.
    const spread = await Promise.all(
      REGIONS.map(async (region) =>
        (
          await regions.direct[region].query("SELECT k FROM counters WHERE k BETWEEN 1 AND 3 ORDER BY k")
        ).rows.map((row) => row.k as string),
      ),
    );
    expect(spread).toEqual([["3"], ["1"], ["2"]]);
  });

  it("refuses binary data keyed by a type it cannot read, before any row is sent", async () => {
    const lines = await copyIn(pair.proxied, "COPY priced FROM STDIN (FORMAT binary)", []);
    expect(lines).toEqual(["ErrorResponse 0A000", "ReadyForQuery I"]);
    // The same table loads in text: the key's text is its key.
    const text = await copyIn(pair.proxied, "COPY priced FROM STDIN", [Buffer.from("1.50\tx\n")]);
    expect(text.slice(1)).toEqual(["CommandComplete COPY 1", "ReadyForQuery I"]);
  });

  it("names the line of a row without its key and loads nothing anywhere", async () => {
    const data = "alice\t104\ta\nbob\t104\tb\nchandra\n elena\t104\te\n";
    const lines = await copyIn(pair.proxied, "COPY loads (tenant_id, id, note) FROM STDIN", pieces(data, 4));
    expect(lines.slice(0, 2)).toEqual(["CopyInResponse", "ErrorResponse 22P04"]);
    expect(lines.at(-1)).toBe("ReadyForQuery I");
    const keyless = await copyIn(pair.proxied, "COPY loads (id, tenant_id) FROM STDIN", [
      Buffer.from("104\t\\N\n"),
    ]);
    expect(keyless[1]).toBe("ErrorResponse 23502");
    expect(await held("104")).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });
    expect(await preparedEverywhere()).toBe(0);
    // The session goes on.
    await same("SELECT count(*) FROM loads WHERE id = 104");
  });

  it("rolls every region back when one region's constraint fails", async () => {
    await regions.direct["us-east"].query("INSERT INTO loads (tenant_id, id) VALUES ('bob', 105)");
    await regions.reference.query("INSERT INTO loads (tenant_id, id) VALUES ('bob', 105)");
    const data = "alice\t105\nchandra\t105\nbob\t105\ndmitri\t105\n";
    const { expected, got } = await bothCopy("COPY loads (tenant_id, id) FROM STDIN", pieces(data));
    expect(got.slice(0, 2)).toEqual(["CopyInResponse", "ErrorResponse 23505"]);
    expect(got).toEqual(expected);
    expect(await held("105")).toEqual({ "eu-west": [], "us-east": ["bob:105"], "ap-south": [] });
    expect(await preparedEverywhere()).toBe(0);
  });

  it("answers a region's error while the client is still sending, as PostgreSQL does", async () => {
    const client = pair.proxied;
    const lines = ["bob\t105\tduplicate of a row us-east holds"];
    for (let i = 0; i < 20_000; i++)
      lines.push(`${["alice", "bob", "chandra"][i % 3]}\t${300_000 + i}\t${"y".repeat(60)}`);
    client.send(encodeQuery({ sql: "COPY loads (tenant_id, id, note) FROM STDIN" }));
    expect(describeMessage(await client.next())).toBe("CopyInResponse");
    // No CopyDone yet: the region's refusal must come without it.
    const answer = await exchange(
      client,
      Buffer.concat(pieces(`${lines.join("\n")}\n`, 8192).map((data) => encodeCopyData({ data }))),
    );
    expect(answer).toEqual(["ErrorResponse 23505", "ReadyForQuery I"]);
    expect(
      await exchange(client, Buffer.concat([encodeCopyDone(), encodeQuery({ sql: "SELECT 1" })])),
    ).toContain('DataRow ["1"]');
    const loaded = await Promise.all(
      REGIONS.map(
        async (region) =>
          (
            await regions.direct[region].query(
              "SELECT count(*)::int AS n FROM loads WHERE id >= 300000 AND id < 400000",
            )
          ).rows[0].n as number,
      ),
    );
    expect(loaded).toEqual([0, 0, 0]);
    expect(await preparedEverywhere()).toBe(0);
  });

  it("answers the client's CopyFail as PostgreSQL does and loads nothing", async () => {
    const { expected, got } = await bothCopy(
      "COPY loads (tenant_id, id) FROM STDIN",
      [Buffer.from("alice\t106\nbob\t106\n")],
      "fail",
    );
    expect(got).toEqual(expected);
    expect(got[1]).toBe("ErrorResponse 57014");
    expect(await held("106")).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });
  });

  it("joins a transaction block: ROLLBACK undoes it, COMMIT commits it with the block's other writes", async () => {
    await same("BEGIN");
    const { expected, got } = await bothCopy("COPY loads (tenant_id, id) FROM STDIN", [
      Buffer.from("alice\t107\nbob\t107\n"),
    ]);
    expect(got).toEqual(expected);
    await same("SELECT tenant_id FROM loads WHERE id = 107 ORDER BY 1");
    await same("ROLLBACK");
    expect(await held("107")).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });

    await same("BEGIN");
    await same("INSERT INTO loads (tenant_id, id) VALUES ('hiro', 108)");
    await bothCopy("COPY loads (tenant_id, id) FROM STDIN", [Buffer.from("alice\t108\nbob\t108\n")]);
    await same("COMMIT");
    expect(await held("108")).toEqual({
      "eu-west": ["alice:108"],
      "us-east": ["bob:108"],
      "ap-south": ["hiro:108"],
    });
    expect(await preparedEverywhere()).toBe(0);
  });

  it("fails the block when a COPY inside it fails", async () => {
    await exchange(pair.proxied, encodeQuery({ sql: "BEGIN" }));
    const lines = await copyIn(pair.proxied, "COPY loads (tenant_id, id) FROM STDIN", [
      Buffer.from("alice\t109\n\\N\t109\n"),
    ]);
    expect(lines.at(-1)).toBe("ReadyForQuery E");
    expect((await exchange(pair.proxied, encodeQuery({ sql: "SELECT 1" })))[0]).toBe("ErrorResponse 25P02");
    expect(await exchange(pair.proxied, encodeQuery({ sql: "ROLLBACK" }))).toEqual([
      "CommandComplete ROLLBACK",
      "ReadyForQuery I",
    ]);
    expect(await held("109")).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });
  });

  it("streams a COPY far larger than a socket's buffer through every region", async () => {
    const keys = ["alice", "bob", "chandra", "dmitri", "george", "hiro"];
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++)
      lines.push(`${keys[i % keys.length]}\t${1_000_000 + i}\t${"x".repeat(60)}\t${i}`);
    const data = Buffer.from(`${lines.join("\n")}\n`);
    const chunks = pieces(data, 65_536);
    const got = await copyIn(pair.proxied, "COPY loads (tenant_id, id, note, qty) FROM STDIN", chunks);
    expect(got).toEqual(["CopyInResponse", "CommandComplete COPY 60000", "ReadyForQuery I"]);
    const counts: number[] = [];
    for (const region of REGIONS) {
      const result = await regions.direct[region].query(
        "SELECT count(*)::int AS n FROM loads WHERE id >= 1000000",
      );
      counts.push(result.rows[0].n as number);
    }
    // alice, dmitri in eu-west; bob, george in us-east; chandra, hiro in ap-south.
    expect(counts).toEqual([20_000, 20_000, 20_000]);
  });

  it("writes every row to every copy of a replicated table", async () => {
    const { expected, got } = await bothCopy("COPY codes FROM STDIN (FORMAT csv)", [
      Buffer.from('EUR,Euro\nUSD,"US, dollar"\n'),
    ]);
    expect(got).toEqual(expected);
    for (const region of REGIONS) {
      const result = await regions.direct[region].query("SELECT code, label FROM codes ORDER BY code");
      expect(result.rows, region).toEqual([
        { code: "EUR", label: "Euro" },
        { code: "USD", label: "US, dollar" },
      ]);
    }
  });

  it("loads a replicated table with a writer in its writer alone, as INSERT writes it", async () => {
    const lines = await copyIn(pair.proxied, "COPY rates FROM STDIN (FORMAT csv)", [
      Buffer.from("EUR,1.1\nINR,0.012\n"),
    ]);
    expect(lines).toEqual(["CopyInResponse", "CommandComplete COPY 2", "ReadyForQuery I"]);
    const counts: number[] = [];
    for (const region of REGIONS) {
      counts.push(
        (await regions.direct[region].query("SELECT count(*)::int AS n FROM rates")).rows[0].n as number,
      );
    }
    expect(counts).toEqual([0, 2, 0]);
  });

  it("keeps a region hint's promise: rows of that region load, a row of another is refused", async () => {
    const ok = await copyIn(pair.proxied, "/* geo: region=us-east */ COPY loads (tenant_id, id) FROM STDIN", [
      Buffer.from("bob\t110\njamal\t110\n"),
    ]);
    expect(ok.slice(1)).toEqual(["CommandComplete COPY 2", "ReadyForQuery I"]);
    const refused = await copyIn(
      pair.proxied,
      "/* geo: region=us-east */ COPY loads (tenant_id, id) FROM STDIN",
      [Buffer.from("bob\t111\nalice\t111\n")],
    );
    expect(refused[1]).toBe("ErrorResponse 0A000");
    expect(await held("110, 111")).toEqual({
      "eu-west": [],
      "us-east": ["bob:110", "jamal:110"],
      "ap-south": [],
    });
  });

  it("passes on a region's refusal of the statement itself, before any data", async () => {
    // PostgreSQL's own refusal (a delimiter must be one byte: 0A000), from every region alike.
    const { expected, got } = await bothCopy("COPY loads FROM STDIN WITH (FORMAT csv, DELIMITER 'ab')", []);
    expect(got).toEqual(expected);
    expect(got[0]).toBe("ErrorResponse 0A000");
  });

  it("stops the COPY in every region on a CancelRequest and loads nothing", async () => {
    const client = pair.proxied;
    client.send(encodeQuery({ sql: "COPY loads (tenant_id, id) FROM STDIN" }));
    expect(describeMessage(await client.next())).toBe("CopyInResponse");
    client.send(encodeCopyData({ data: Buffer.from("alice\t113\nbob\t113\n") }));
    await new Promise<void>((resolve) => {
      const socket = connect(regions.proxy.port, "127.0.0.1", () => {
        socket.end(encodeCancelRequest({ processId: client.processId, secretKey: client.secretKey }));
      });
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
    });
    const answer = await exchange(client, Buffer.alloc(0));
    expect(answer).toEqual(["ErrorResponse 57014", "ReadyForQuery I"]);
    // What the client still sends of the COPY is dropped, as PostgreSQL drops it.
    expect(
      await exchange(client, Buffer.concat([encodeCopyDone(), encodeQuery({ sql: "SELECT 1" })])),
    ).toEqual(["RowDescription ?column?:23", 'DataRow ["1"]', "CommandComplete SELECT 1", "ReadyForQuery I"]);
    expect(await held("113")).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });
    expect(await preparedEverywhere()).toBe(0);
  });

  it("refuses a column list without the key", async () => {
    const lines = await copyIn(pair.proxied, "COPY loads (id, note) FROM STDIN", []);
    expect(lines).toEqual(["ErrorResponse 0A000", "ReadyForQuery I"]);
  });

  it("round-trips a file through psql's \\copy", async () => {
    const file = join(scratch, "in.csv");
    writeFileSync(file, 'alice,112,"a, b"\nbob,112,"multi\nline"\nfarah,112,\n');
    const loaded = await psql(`\\copy loads (tenant_id, id, note) FROM '${file}' WITH (FORMAT csv)`);
    expect(loaded.stderr).toBe("");
    expect(loaded.stdout.trim()).toBe("COPY 3");
    expect(await held("112")).toEqual({
      "eu-west": ["alice:112"],
      "us-east": ["bob:112"],
      "ap-south": ["farah:112"],
    });
    const out = join(scratch, "out.csv");
    const dumped = await psql(
      `\\copy (SELECT tenant_id, id, note FROM loads WHERE id = 112 ORDER BY tenant_id) TO '${out}' WITH (FORMAT csv)`,
    );
    expect(dumped.stderr).toBe("");
    expect(readFileSync(out, "utf8")).toBe(readFileSync(file, "utf8"));
  });
});

/** A COPY TO STDOUT: the data of every CopyData joined, and the other messages as lines. */
async function copyOut(client: RawClient, sql: string): Promise<{ data: Buffer; lines: string[] }> {
  client.send(encodeQuery({ sql }));
  const parts: Buffer[] = [];
  const lines: string[] = [];
  for (;;) {
    const message = await client.next();
    if (message.type === "CopyData") parts.push(Buffer.from(message.data));
    else lines.push(describeMessage(message));
    if (message.type === "ReadyForQuery") return { data: Buffer.concat(parts), lines };
  }
}

async function sameCopyOut(sql: string): Promise<{ data: Buffer; lines: string[] }> {
  const expected = await copyOut(pair.direct, sql);
  const got = await copyOut(pair.proxied, sql);
  expect(got.lines, sql).toEqual(expected.lines);
  expect(got.data.toString("latin1"), sql).toBe(expected.data.toString("latin1"));
  return got;
}

describe("COPY TO STDOUT across regions", () => {
  beforeAll(async () => {
    const rows = [
      "('alice', 200, E'tab\\there', 1, NULL)",
      "('bob', 200, E'new\\nline \\\\ and \"quotes\", commas', NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
      "('chandra', 200, '', -5, NULL)",
      "('farah', 200, 'nil', 7, NULL)",
      "('george', 200, NULL, 9223372036854775807, '00000000-0000-0000-0000-000000000002')",
      "('hiro', 201, '\\.', 3, NULL)",
    ].join(", ");
    await same(`INSERT INTO loads (tenant_id, id, note, qty, tag) VALUES ${rows}`);
  });

  it("writes an ordered query's rows in text exactly as one server does", async () => {
    const got = await sameCopyOut(
      "COPY (SELECT tenant_id, id, note, qty, tag FROM loads WHERE id IN (200, 201) ORDER BY tenant_id) TO STDOUT",
    );
    expect(got.lines).toEqual(["CopyOutResponse", "CopyDone", "CommandComplete COPY 6", "ReadyForQuery I"]);
    expect(got.data.toString()).toContain("tab\\there");
  });

  it("writes CSV with HEADER, FORCE_QUOTE, a NULL marker and quoting as one server does", async () => {
    await sameCopyOut(
      "COPY (SELECT tenant_id, note, qty FROM loads WHERE id IN (200, 201) ORDER BY tenant_id) TO STDOUT WITH (FORMAT csv, HEADER, NULL 'nil', FORCE_QUOTE (tenant_id))",
    );
    await sameCopyOut(
      "COPY (SELECT note FROM loads WHERE id IN (200, 201) ORDER BY tenant_id) TO STDOUT WITH (FORMAT csv, QUOTE '''', ESCAPE '\\', DELIMITER ';')",
    );
  });

  it("writes binary COPY as one server does", async () => {
    await sameCopyOut(
      "COPY (SELECT tenant_id, count(*), sum(qty), avg(id) FROM loads WHERE id IN (101, 102, 103, 105, 108, 200, 201) GROUP BY tenant_id ORDER BY tenant_id) TO STDOUT (FORMAT binary)",
    );
    await sameCopyOut(
      "COPY (SELECT tenant_id, id, note, qty, tag FROM loads WHERE id IN (200, 201) ORDER BY tenant_id) TO STDOUT (FORMAT binary)",
    );
  });

  it("combines aggregates across regions as the SELECT would", async () => {
    const got = await sameCopyOut(
      "COPY (SELECT tenant_id, count(*), sum(qty) FROM loads WHERE id IN (101, 102, 103, 105, 108, 200, 201) GROUP BY tenant_id ORDER BY tenant_id) TO STDOUT (FORMAT csv)",
    );
    expect(got.lines).toContain("CopyOutResponse");
  });

  it("writes a whole table's rows from every region", async () => {
    const got = await copyOut(pair.proxied, "COPY loads (tenant_id, id) TO STDOUT");
    const expected: string[] = [];
    for (const region of REGIONS) {
      const result = await regions.direct[region].query(
        "SELECT tenant_id || E'\\t' || id AS line FROM loads",
      );
      expected.push(...result.rows.map((row) => row.line as string));
    }
    expect(got.lines).toEqual([
      "CopyOutResponse",
      "CopyDone",
      `CommandComplete COPY ${expected.length}`,
      "ReadyForQuery I",
    ]);
    expect(got.data.toString().split("\n").slice(0, -1).sort()).toEqual(expected.sort());
    // Every column, in table order, as the table itself is copied.
    const whole = await copyOut(pair.proxied, "COPY loads TO STDOUT WITH (FORMAT csv)");
    const lines = whole.data.toString().split("\n");
    expect(lines).toContain('chandra,200,"",-5,');
  });
});

/** psql, spawned (the proxy answering it runs in this process): its output and errors. */
function psql(command: string): Promise<{ stdout: string; stderr: string; status: number | null }> {
  const args = [
    "-X",
    "-h",
    "127.0.0.1",
    "-p",
    String(regions.proxy.port),
    "-U",
    "postgres",
    "-d",
    "postgres",
  ];
  const child = spawn(psqlPath, [...args, "-c", command], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "10" },
  });
  child.stdin.end();
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on("close", (status) => resolve({ stdout, stderr, status })));
}
