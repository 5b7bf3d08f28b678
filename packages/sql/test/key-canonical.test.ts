import { type PgCluster, RawClient, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type KeyValue } from "../src/index.js";
import { canonicalKeyValue, type KeyType } from "../src/key-values.js";
import { formatKey } from "./summarize.js";

const KEYS = new Map([["users", "tenant_id"]]);

/** [key type, WHERE clause over users.tenant_id, the key constraint the analysis keeps]. */
const ROWS: [KeyType, string, string][] = [
  // Integer keys: every spelling of one integer is one key, whatever it is written as.
  ["integer", "tenant_id = 5 AND tenant_id = 5.0", "5"],
  ["integer", "tenant_id = '05' AND tenant_id = 5", "'5'"],
  ["integer", "tenant_id = ' 5 ' AND tenant_id = '+5'", "'5'"],
  ["integer", "tenant_id = 50e-1", "5"],
  ["integer", "tenant_id = '5'::int8 AND tenant_id = 5::int2", "'5'::int8"],
  ["integer", "tenant_id = '5.0'::numeric", "'5'::numeric"],
  ["integer", "tenant_id IN ('1', '01', 1.0, 2)", "'1',1,2"],
  ["integer", "tenant_id = ANY('{05,6}'::int8[])", "'5'::int8,'6'::int8"],
  ["integer", "tenant_id = 12345678901", "12345678901"],
  // ... and what cannot be read exactly constrains nothing.
  ["integer", "tenant_id = 5.5", "any"],
  ["integer", "tenant_id = 5.5 AND tenant_id = 7", "7"],
  ["integer", "tenant_id = '5'::float8", "any"],
  ["integer", "tenant_id = $1::float8", "any"],
  ["integer", "tenant_id = '0x10'", "any"],
  ["integer", "tenant_id = '1_000'", "any"],
  ["integer", "tenant_id = '5'::text", "any"],
  ["integer", "tenant_id IN (1, 2.5)", "any"],
  ["integer", "tenant_id = 5 AND tenant_id = 6", "none"],
  // Text keys: characters, unless a cast may change them.
  ["text", "tenant_id = 'alice' AND tenant_id = 'alice'::varchar", "'alice'"],
  ["text", "tenant_id = 'alice' AND tenant_id = 'bob'", "none"],
  ["text", "tenant_id = 'ab '::char(3)", "any"],
  ["text", "tenant_id = 'ab '::bpchar", "any"],
  ["text", "tenant_id = 'abcdef'::varchar(3)", "any"],
  ["text", "tenant_id = 'Alice'::citext", "any"],
  ["text", "tenant_id = $1::name", "any"],
  ["text", "tenant_id = $1::text", "$1::text"],
  ["text", "tenant_id = 5::text", "5::text"],
  ["text", "tenant_id = 1e2::text", "any"],
];

const analyzers = new Map<KeyType, Analyzer>();
const cached = new Map<KeyType, Analyzer>();
let legacy: Analyzer;

beforeAll(async () => {
  for (const keyType of ["text", "integer"] as const) {
    analyzers.set(keyType, await Analyzer.create({ keyColumns: KEYS, keyType, cacheSize: 0 }));
    cached.set(keyType, await Analyzer.create({ keyColumns: KEYS, keyType }));
  }
  legacy = await Analyzer.create({ keyColumns: KEYS, cacheSize: 0 });
});

describe("key values compared as the key's type compares them", () => {
  it.each(ROWS)("%s key: %s", (keyType, where, expected) => {
    const sql = `SELECT * FROM users WHERE ${where}`;
    const key = analyzers.get(keyType)?.analyze(sql).tables[0]?.key;
    if (key === undefined) throw new Error("no table");
    expect(formatKey(key)).toBe(expected);
    // Through the shape cache (twice: the second is a hit), the same.
    const shaped = cached.get(keyType);
    expect(formatKey(shaped?.analyze(sql).tables[0]?.key ?? { kind: "any" })).toBe(formatKey(key));
    expect(formatKey(shaped?.analyze(sql).tables[0]?.key ?? { kind: "any" })).toBe(formatKey(key));
  });

  it("keeps, without a key type, every literal that may be the same key", () => {
    const key = legacy.analyze("SELECT * FROM users WHERE tenant_id = 5 AND tenant_id = 5.0").tables[0]?.key;
    expect(formatKey(key ?? { kind: "any" })).toBe("5");
    const text = legacy.analyze("SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id = 'b'").tables[0]
      ?.key;
    expect(formatKey(text ?? { kind: "any" })).toBe("none");
  });
});

/**
 * Against PostgreSQL: a literal the analysis reads as a key must match, in a bigint or text key
 * column, exactly the rows of that key (and one it gives up on may match any).
 */
describe("canonical key values on real PostgreSQL", () => {
  let cluster: PgCluster;
  let client: RawClient;

  beforeAll(async () => {
    cluster = await startCluster({
      count: 1,
      initSql:
        "CREATE TABLE ik (k int8); INSERT INTO ik VALUES (5), (50), (0), (-5), (6), (1000), (16); CREATE TABLE tk (k text); INSERT INTO tk VALUES ('ab'), ('ab '), ('alice'), ('5'), ('100');",
    });
    const server = cluster.servers[0];
    if (server === undefined) throw new Error("no server started");
    client = await RawClient.connect({
      host: server.host,
      port: server.port,
      user: server.user,
      database: server.database,
    });
  });

  afterAll(async () => {
    await client?.close();
    await cluster?.stop();
  });

  const spellings: [KeyType, string][] = [
    ["integer", "5"],
    ["integer", "5.0"],
    ["integer", "'05'"],
    ["integer", "' 5 '"],
    ["integer", "'-5'"],
    ["integer", "50e-1"],
    ["integer", "0.5e1"],
    ["integer", "'5'::int2"],
    ["integer", "'5.0'::numeric"],
    ["integer", "'5.00'::numeric"],
    ["integer", "5.5"],
    ["integer", "'16'::float8"],
    ["integer", "1e3"],
    ["integer", "-0.0"],
    ["text", "'ab'"],
    ["text", "'ab '"],
    ["text", "'ab '::varchar"],
    ["text", "'ab '::char(3)"],
    ["text", "5::text"],
    ["text", "1e2::text"],
  ];

  it.each(spellings)("%s key = %s", async (keyType, literal) => {
    const analysis = analyzers.get(keyType)?.analyze(`SELECT * FROM users WHERE tenant_id = ${literal}`);
    const key = analysis?.tables[0]?.key;
    const table = keyType === "integer" ? "ik" : "tk";
    const result = await client.query(`SELECT k::text FROM ${table} WHERE k = ${literal} ORDER BY 1`);
    const matched = result.error === undefined ? result.rows.map((r) => r[0] ?? null) : [];
    if (key === undefined || key.kind === "any") return;
    const texts = key.values.map((v: KeyValue) => (v.kind === "literal" ? v.text : `$${v.index}`));
    // Every row PostgreSQL matches has one of the analysis' keys.
    for (const m of matched) expect(texts).toContain(m);
    // And the one value the analysis reads is the key PostgreSQL compares.
    const only = key.values[0];
    if (only !== undefined) expect(canonicalKeyValue(only, keyType)).toEqual(only);
  });
});
