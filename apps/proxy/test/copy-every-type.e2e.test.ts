import { encodeCopyData, encodeCopyDone, encodeQuery } from "@geo/proto";
import type { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { describeMessage, exchange, type SideBySide, sideBySide } from "./support/side-by-side.js";

// COPY FROM STDIN of rows holding every common type, in binary, text and CSV, through the proxy
// into a geo-partitioned table over three real regions. The data is PostgreSQL's own: the rows
// are made in a source table of the reference database and copied out of it in each format, so
// what the proxy splits is exactly what a client dumping a table would send.

const COLUMNS = `
  tenant_id text NOT NULL,
  id        int4 NOT NULL,
  b    bool,
  i2   int2,
  i4   int4,
  i8   int8,
  f4   float4,
  f8   float8,
  n    numeric,
  t    text,
  vc   varchar(40),
  by   bytea,
  d    date,
  ts   timestamp,
  tstz timestamptz,
  iv   interval,
  u    uuid,
  jb   jsonb,
  js   json,
  ip   inet,
  ia   int4[],
  ta   text[],
  PRIMARY KEY (tenant_id, id)`;

const TARGETS = ["typed_bin", "typed_one", "typed_txt", "typed_txt2", "typed_csv", "typed_csv2"] as const;
const SCHEMA = TARGETS.map((table) => `CREATE TABLE ${table} (${COLUMNS});`).join("\n");
const TOML = TARGETS.map(
  (table) => `
[[tables]]
table = "${table}"
placement = "geo_partitioned"
key = "tenant_id"
`,
).join("");

// One row with every type at an awkward value, one with every column but the key NULL, and rows
// for keys of all three regions, whose text is full of what the text and CSV formats must quote.
const SOURCE_ROWS = `
INSERT INTO typed_source VALUES
  ('alice', 1, true, -32768, 2147483647, -9223372036854775808, 'NaN', '-Infinity', 'NaN',
   E'h\\u00e9llo \\u2713 \\u65e5\\u672c\\ttab\\nnewline \\\\ back;slash, "quoted"', 'vär;char,"x"',
   '\\x00ff0a5c0d22', '2024-02-29', '1999-12-31 23:59:59.999999', '2026-03-01 12:00:00.5+05:30',
   '1 year 2 mons 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
   '{"a": [1, 2.50, null], "k\\u00e9y": "v\\"al\\nue", "n": {"x": true}}', '{"keep":  "spacing" , "dup": 1, "dup": 2}',
   '2001:db8::1/64', '{1,NULL,-3}', '{"a,b","c\\"d",NULL,"\\u65e5\\u672c","\\\\N",""}'),
  ('alice', 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL),
  ('bob', 1, false, 32767, -2147483648, 9223372036854775807, 3.4028235e38, 2.2250738585072014e-308,
   '123456789012345678901234567890.000000000000000000000000000001', '\\N', 'nil', '\\x', 'infinity',
   '-infinity', '1970-01-01 00:00:00+00', '-178000000 years', '00000000-0000-0000-0000-000000000000',
   '[]', '"just a string"', '10.0.0.0/8', '{}', '{}'),
  ('bob', 2, true, 0, 0, 0, -0.0, 1e-300, '-0.00000000000000000001', 'nil', '', '\\x5c4e', '0001-01-01',
   '2000-02-29 00:00:00', '2038-01-19 03:14:08+00', '-1 days +02:03:04', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
   '{"\\u00fc": "\\u00fc", "e": 1e400}', '[1, "two", {"3": null}]', '::ffff:192.168.0.1', '{2147483647}',
   E'{"line\\nbreak","tab\\there","quote''s"}'),
  ('chandra', 1, false, 1, 1, 1, 1.5, 3.141592653589793, '1e-30', E'\\\\.', E'\\\\.', '\\x0d0a', '2026-12-06',
   '2026-12-06 08:00:00', '2026-12-06 08:00:00-08', '00:00:00.000001', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12',
   'null', 'null', '192.168.1.1', '{NULL}', '{NULL,"NULL"}'),
  ('chandra', 2, NULL, 2, NULL, 2, NULL, 2, NULL, E'\\r\\n;,\\t"', NULL, '\\x', NULL, '2026-01-01', NULL,
   '0', NULL, '{"deep": [[[[1]]]]}', NULL, '::', NULL, '{"a b","   "}'),
  ('dmitri', 1, true, 3, 3, 3, 3, 3, '3.000', 'three', 'three', '\\x03', '2026-01-03', '2026-01-03 03:03:03',
   '2026-01-03 03:03:03+00', '3 hours', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13', '3', '3', '3.3.3.3', '{3}', '{3}'),
  ('george', 1, false, 4, 4, 4, 4, 4, '4.0', 'four', 'four', '\\x04', '2026-01-04', '2026-01-04 04:04:04',
   '2026-01-04 04:04:04+00', '4 hours', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a14', '4', '4', '4.4.4.4', '{4}', '{4}'),
  ('hiro', 1, true, 5, 5, 5, 5, 5, '5', 'five', 'five', '\\x05', '2026-01-05', '2026-01-05 05:05:05',
   '2026-01-05 05:05:05+00', '5 hours', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a15', '5', '5', '5.5.5.5', '{5}', '{5}');`;

/** Every column as text, as PostgreSQL prints it: how a row is compared wherever it lives. */
const AS_TEXT = `tenant_id || ':' || id AS key, row_to_json(r)::text AS json,
  concat_ws('|', b::text, i2::text, i4::text, i8::text, f4::text, f8::text, n::text, t, vc, by::text,
    d::text, ts::text, tstz::text, iv::text, u::text, jb::text, js::text, ip::text, ia::text, ta::text,
    t IS NULL, vc IS NULL, by IS NULL) AS text`;

let regions: RealRegions;
let pair: SideBySide;
const home = new Map<string, RegionName>();

beforeAll(async () => {
  regions = await startRealRegions(TOML);
  for (const region of REGIONS) await regions.direct[region].query(SCHEMA);
  await regions.reference.query(`CREATE TABLE typed_source (${COLUMNS}); ${SOURCE_ROWS} ${SCHEMA}`);
  // One time zone and float format for every comparison, whatever the servers' defaults.
  for (const client of [...Object.values(regions.direct), regions.reference])
    await client.query("SET TimeZone = 'UTC'; SET extra_float_digits = 1; SET DateStyle = 'ISO, MDY'");
  pair = await sideBySide(regions.cluster.servers[0]!, regions.proxy.port, { directDatabase: "reference" });
  for (const [key, region] of regions.entries) home.set(key, region);
});
afterAll(async () => {
  await pair?.close();
  await regions?.close();
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

/** Sends a COPY FROM STDIN with `data` cut into `size`-byte CopyData messages, then CopyDone. */
async function copyIn(client: RawClient, sql: string, data: Buffer, size: number): Promise<string[]> {
  client.send(encodeQuery({ sql }));
  const first = describeMessage(await client.next());
  if (first !== "CopyInResponse") return [first, ...(await exchange(client, Buffer.alloc(0)))];
  const messages: Buffer[] = [];
  for (let at = 0; at < data.length; at += size)
    messages.push(encodeCopyData({ data: data.subarray(at, at + size) }));
  return [first, ...(await exchange(client, Buffer.concat([...messages, encodeCopyDone()])))];
}

type Row = { key: string; json: string; text: string };

async function rowsOf(client: { query(sql: string): Promise<{ rows: unknown[] }> }, table: string) {
  const result = await client.query(`SELECT ${AS_TEXT} FROM ${table} r ORDER BY tenant_id, id`);
  return result.rows as Row[];
}

/** A reference table's rows, split by the region the directory places each key in. */
async function expectedByRegion(table: string): Promise<Record<RegionName, Row[]>> {
  const out = { "eu-west": [], "us-east": [], "ap-south": [] } as Record<RegionName, Row[]>;
  for (const row of await rowsOf(regions.reference, table)) {
    const region = home.get(row.key.split(":")[0]!)!;
    out[region].push(row);
  }
  return out;
}

async function heldByRegion(table: string): Promise<Record<RegionName, Row[]>> {
  const out = {} as Record<RegionName, Row[]>;
  for (const region of REGIONS) out[region] = await rowsOf(regions.direct[region], table);
  return out;
}

const FORMATS = [
  { table: "typed_bin", options: "(FORMAT binary)", size: 5, lossless: true },
  { table: "typed_txt", options: "", size: 3, lossless: true },
  // Text never quotes a value equal to the NULL marker: the dump loads "nil" as NULL, on one
  // server as through the proxy.
  { table: "typed_txt2", options: "(DELIMITER ';', NULL 'nil')", size: 11, lossless: false },
  {
    table: "typed_csv",
    options: "(FORMAT csv, HEADER, DELIMITER ';', NULL 'nil', QUOTE '''', ESCAPE '\\')",
    size: 4,
    lossless: true,
  },
  { table: "typed_csv2", options: "(FORMAT csv)", size: 1, lossless: true },
] as const;

describe("COPY FROM STDIN of every common type, split over three regions", () => {
  for (const format of FORMATS) {
    it(`loads PostgreSQL's own ${format.options || "text"} dump row for row into each key's region`, async () => {
      const dump = await copyOut(pair.direct, `COPY typed_source TO STDOUT ${format.options}`);
      expect(dump.lines).toEqual([
        "CopyOutResponse",
        "CopyDone",
        "CommandComplete COPY 9",
        "ReadyForQuery I",
      ]);
      const loaded = await copyIn(
        pair.proxied,
        `COPY ${format.table} FROM STDIN ${format.options}`,
        dump.data,
        format.size,
      );
      expect(loaded).toEqual(["CopyInResponse", "CommandComplete COPY 9", "ReadyForQuery I"]);
      // The same dump loaded into one server holding every row: what each region must hold.
      const direct = await copyIn(
        pair.direct,
        `COPY ${format.table} FROM STDIN ${format.options}`,
        dump.data,
        65_536,
      );
      expect(direct).toEqual(loaded);
      const held = await heldByRegion(format.table);
      const expected = await expectedByRegion(format.table);
      expect(held).toEqual(expected);
      if (format.lossless) expect(expected).toEqual(await expectedByRegion("typed_source"));
      else expect(expected).not.toEqual(await expectedByRegion("typed_source"));
      // Every region got rows, and the awkward row is there in full.
      for (const region of REGIONS) expect(held[region].length, region).toBeGreaterThan(0);
      expect(held["eu-west"][0]!.text).toContain("|NaN|-Infinity|NaN|");
      expect(held["us-east"][0]!.text).toContain(
        "|123456789012345678901234567890.000000000000000000000000000001|",
      );
    });
  }

  it("loads a binary COPY of one row with every type into its key's region alone", async () => {
    for (const [tenant, region] of [
      ["alice", "eu-west"],
      ["bob", "us-east"],
    ] as const) {
      const one = `SELECT * FROM typed_source WHERE tenant_id = '${tenant}' AND id = 1`;
      const dump = await copyOut(pair.direct, `COPY (${one}) TO STDOUT (FORMAT binary)`);
      const loaded = await copyIn(pair.proxied, "COPY typed_one FROM STDIN (FORMAT binary)", dump.data, 2);
      expect(loaded).toEqual(["CopyInResponse", "CommandComplete COPY 1", "ReadyForQuery I"]);
      const held = await heldByRegion("typed_one");
      const source = await rowsOf(regions.reference, `(${one})`);
      expect(source).toHaveLength(1);
      expect(held[region].filter((row) => row.key === `${tenant}:1`)).toEqual(source);
      for (const other of REGIONS)
        if (other !== region)
          expect(held[other].filter((row) => row.key.startsWith(`${tenant}:`))).toEqual([]);
    }
  });

  it("answers COPY TO STDOUT of the loaded rows, in binary, as the source table's", async () => {
    // Through the proxy: the rows of three regions merged in order, written as one server does.
    const order = "ORDER BY tenant_id, id";
    const got = await copyOut(
      pair.proxied,
      `COPY (SELECT * FROM typed_bin ${order}) TO STDOUT (FORMAT binary)`,
    );
    const expected = await copyOut(
      pair.direct,
      `COPY (SELECT * FROM typed_source ${order}) TO STDOUT (FORMAT binary)`,
    );
    expect(got.lines).toEqual(expected.lines);
    expect(got.data.equals(expected.data)).toBe(true);
    const text = await copyOut(
      pair.proxied,
      `COPY (SELECT * FROM typed_csv ${order}) TO STDOUT (FORMAT csv)`,
    );
    const textExpected = await copyOut(
      pair.direct,
      `COPY (SELECT * FROM typed_source ${order}) TO STDOUT (FORMAT csv)`,
    );
    expect(text.data.toString()).toBe(textExpected.data.toString());
  });
});

describe("COPY into a pinned table (eu_audit, pinned to eu-west)", () => {
  const counts = async (action: string): Promise<number[]> => {
    const out: number[] = [];
    for (const region of REGIONS) {
      const result = await regions.direct[region].query(
        "SELECT count(*)::int AS n FROM eu_audit WHERE action = $1",
        [action],
      );
      out.push(result.rows[0].n as number);
    }
    return out;
  };

  it("loads every row, whatever its tenant, in eu-west only", async () => {
    const data = Buffer.from(
      "alice\tcopy-pinned\nbob\tcopy-pinned\nchandra\tcopy-pinned\nnobody\tcopy-pinned\n",
    );
    const lines = await copyIn(pair.proxied, "COPY eu_audit (tenant_id, action) FROM STDIN", data, 6);
    expect(lines).toEqual(["CopyInResponse", "CommandComplete COPY 4", "ReadyForQuery I"]);
    expect(await counts("copy-pinned")).toEqual([4, 0, 0]);
  });

  it("loads binary and CSV data in eu-west only", async () => {
    const source = await copyOut(
      pair.direct,
      "COPY (SELECT tenant_id, 'copy-pinned-bin'::text FROM typed_source) TO STDOUT (FORMAT binary)",
    );
    const binary = await copyIn(
      pair.proxied,
      "COPY eu_audit (tenant_id, action) FROM STDIN (FORMAT binary)",
      source.data,
      7,
    );
    expect(binary).toEqual(["CopyInResponse", "CommandComplete COPY 9", "ReadyForQuery I"]);
    expect(await counts("copy-pinned-bin")).toEqual([9, 0, 0]);
    const csv = await copyIn(
      pair.proxied,
      "COPY eu_audit (tenant_id, action) FROM STDIN (FORMAT csv)",
      Buffer.from('"bob, jr.",copy-pinned-csv\n"multi\nline",copy-pinned-csv\n'),
      5,
    );
    expect(csv).toEqual(["CopyInResponse", "CommandComplete COPY 2", "ReadyForQuery I"]);
    expect(await counts("copy-pinned-csv")).toEqual([2, 0, 0]);
  });

  it("answers COPY TO STDOUT from it with eu-west's rows", async () => {
    const sqls = [
      "COPY eu_audit TO STDOUT",
      "COPY eu_audit (tenant_id, action) TO STDOUT (FORMAT csv, HEADER)",
      "COPY (SELECT tenant_id, action FROM eu_audit WHERE action LIKE 'copy-pinned%' ORDER BY id) TO STDOUT (FORMAT binary)",
    ];
    const eu = regions.cluster.servers[0]!;
    const direct = await sideBySide(eu, regions.proxy.port);
    try {
      for (const sql of sqls) {
        const got = await copyOut(direct.proxied, sql);
        const expected = await copyOut(direct.direct, sql);
        expect(got.lines, sql).toEqual(expected.lines);
        expect(got.data.equals(expected.data), sql).toBe(true);
      }
      const some = await copyOut(direct.proxied, sqls[2]!);
      expect(some.lines).toContain("CommandComplete COPY 15");
    } finally {
      await direct.close();
    }
  });

  it("refuses a region hint naming another region as it refuses the INSERT, loading nothing", async () => {
    const insert = await exchange(
      pair.proxied,
      encodeQuery({
        sql: "/* geo: region=us-east */ INSERT INTO eu_audit (tenant_id, action) VALUES ('bob', 'copy-hinted')",
      }),
    );
    const copy = await copyIn(
      pair.proxied,
      "/* geo: region=us-east */ COPY eu_audit (tenant_id, action) FROM STDIN",
      Buffer.from("bob\tcopy-hinted\n"),
      64,
    );
    expect(insert[0]).toBe("ErrorResponse 0A000");
    // The same refusal, before any CopyInResponse.
    expect(copy).toEqual([insert[0], "ReadyForQuery I"]);
    expect(await counts("copy-hinted")).toEqual([0, 0, 0]);
    // The hint naming its own region is kept.
    const kept = await copyIn(
      pair.proxied,
      "/* geo: region=eu-west */ COPY eu_audit (tenant_id, action) FROM STDIN",
      Buffer.from("bob\tcopy-hinted\n"),
      64,
    );
    expect(kept).toEqual(["CopyInResponse", "CommandComplete COPY 1", "ReadyForQuery I"]);
    expect(await counts("copy-hinted")).toEqual([1, 0, 0]);
  });
});
