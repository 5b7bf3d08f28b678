import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashInt8Extended, hashTextExtended } from "../src/index.js";

const PER_TYPE = 12_000;

/** A deterministic generator, so a failure names values that reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ALPHABET = [
  "a",
  "Z",
  "0",
  " ",
  "-",
  "é",
  "ß",
  "日",
  "本",
  "ж",
  "\u{1F600}",
  "\u00a0",
  "'",
  '"',
  "\\",
  "\t",
];

function texts(count: number): string[] {
  const next = random(7);
  const values = ["", "a", "alice", "tenant-42", "日本語", "\u{1F600}", " ", "x".repeat(11), "y".repeat(12)];
  for (let length = 0; length <= 40; length++) values.push("k".repeat(length));
  while (values.length < count) {
    const length = Math.floor(next() * 30);
    let text = "";
    for (let index = 0; index < length; index++) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
    values.push(text);
  }
  return values;
}

function integers(count: number): bigint[] {
  const next = random(11);
  const values = [
    0n,
    1n,
    -1n,
    2n ** 31n - 1n,
    -(2n ** 31n),
    2n ** 32n,
    -(2n ** 32n),
    2n ** 63n - 1n,
    -(2n ** 63n),
  ];
  for (let bit = 0n; bit < 63n; bit++) values.push(2n ** bit, -(2n ** bit), 2n ** bit - 1n);
  while (values.length < count) {
    const high = BigInt(Math.floor(next() * 4_294_967_296));
    const low = BigInt(Math.floor(next() * 4_294_967_296));
    const value = BigInt.asIntN(64, (high << 32n) | low);
    // Small magnitudes too: keys are often serial numbers.
    values.push(next() < 0.3 ? value % 100_000n : value);
  }
  return values;
}

describe("the hash port against a real PostgreSQL 15", () => {
  let cluster: PgCluster;
  let client: pg.Client;

  beforeAll(async () => {
    cluster = await startCluster({ count: 1 });
    client = new pg.Client({ connectionString: cluster.servers[0]!.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await cluster?.stop();
  });

  it(`gives hashtextextended(x, 0) for ${PER_TYPE} text values, empty and multibyte included`, async () => {
    const values = texts(PER_TYPE);
    const result = await client.query<{ h: string }>(
      "SELECT hashtextextended(x, 0)::text AS h FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n",
      [values],
    );
    expect(result.rows).toHaveLength(values.length);
    const mismatches = values.filter(
      (value, index) => hashTextExtended(value).toString() !== result.rows[index]!.h,
    );
    expect(mismatches).toEqual([]);
  });

  it(`gives hashint8extended(x, 0) for ${PER_TYPE} int8 values, negatives and extremes included`, async () => {
    const values = integers(PER_TYPE);
    const result = await client.query<{ h: string }>(
      "SELECT hashint8extended(x, 0)::text AS h FROM unnest($1::int8[]) WITH ORDINALITY AS u(x, n) ORDER BY n",
      [values.map(String)],
    );
    expect(result.rows).toHaveLength(values.length);
    const mismatches = values.filter(
      (value, index) => hashInt8Extended(value).toString() !== result.rows[index]!.h,
    );
    expect(mismatches).toEqual([]);
  });

  it("gives the same value with a non-zero seed", async () => {
    const values = texts(500);
    const result = await client.query<{ h: string }>(
      "SELECT hashtextextended(x, -77)::text AS h FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n",
      [values],
    );
    expect(
      values.filter((value, index) => hashTextExtended(value, -77n).toString() !== result.rows[index]!.h),
    ).toEqual([]);
  });
});
