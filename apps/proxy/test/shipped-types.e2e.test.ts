import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * Values of every kind of type travel exactly when the home region finishes a read: whole rows
 * and composites, bit(n) and varbit, "char", arrays of anything, enums, domains, ranges, typmods.
 * Each answer through the proxy (three real regions) equals the answer of one PostgreSQL holding
 * every row, or is a 0A000 refusal with a hint (anonymous records, which no name casts back to).
 */
const SCHEMA = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TYPE pair AS (a integer, b text);
CREATE TYPE floatrange AS RANGE (subtype = float8);
CREATE TABLE things (
  tenant_id text NOT NULL,
  id        int4 NOT NULL,
  flags     bit(3),
  vflags    varbit(5),
  c         "char",
  m         mood,
  d         posint,
  p         pair,
  r         int4range,
  fr        floatrange,
  tags      text[],
  grid      int4[],
  moods     mood[],
  pairs     pair[],
  cs        "char"[],
  bits      bit(3)[],
  v         varchar(4),
  ch        char(3),
  n         numeric(6,2),
  ts        timestamp(0),
  PRIMARY KEY (tenant_id, id)
);`;

const TOML = `
[[tables]]
table = "things"
placement = "geo_partitioned"
key = "tenant_id"
`;

const COLUMNS = [
  "flags",
  "vflags",
  "c",
  "m",
  "d",
  "p",
  "r",
  "fr",
  "tags",
  "grid",
  "moods",
  "pairs",
  "cs",
  "bits",
  "v",
  "ch",
  "n",
  "ts",
];

const KEYS = ["alice", "bob", "chandra", "0", "1", "2"];

function rows(): string {
  const out: string[] = [];
  for (const [k, key] of KEYS.entries()) {
    for (let id = 1; id <= 4; id++) {
      const n = k * 4 + id;
      const bit = (n % 8).toString(2).padStart(3, "0");
      const moods = ["sad", "ok", "happy"];
      out.push(
        `('${key}', ${id}, B'${bit}', B'${(n % 32).toString(2)}', '${"abcxyz"[n % 6]}', '${moods[n % 3]}', ${1 + (n % 4)}, ` +
          `ROW(${n % 3}, '${["x", "y, z", 'q"r'][n % 3]}')::pair, int4range(${n % 5}, ${(n % 5) + 3}), floatrange(${(n % 4) / 2}, ${(n % 4) + 1.5}), ` +
          `ARRAY['t${n % 3}', 'a b', NULL], ARRAY[${n % 3}, ${n % 2}], ARRAY['${moods[n % 3]}', 'ok']::mood[], ARRAY[ROW(${n % 2}, 'p')::pair], ` +
          `ARRAY['${"pq"[n % 2]}'::"char"], ARRAY[B'${bit}', B'111']::bit(3)[], '${["ab", "abcd", "b", "ab"][n % 4]}', '${["x", "yy", "zzz"][n % 3]}', ` +
          `${(n * 1.25).toFixed(2)}, timestamp '2026-01-01 00:00:00' + interval '${n} hours')`,
      );
    }
  }
  return `INSERT INTO things (tenant_id, id, ${COLUMNS.join(", ")}) VALUES ${out.join(",\n")}`;
}

let regions: RealRegions;
let proxy: pg.Client;
let reference: pg.Client;

async function textClient(port: number, database = "shop"): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database,
    types: { getTypeParser: () => (value: string) => value },
  });
  await client.connect();
  return client;
}

beforeAll(async () => {
  regions = await startRealRegions(TOML);
  for (const region of REGIONS) await regions.direct[region].query(SCHEMA);
  await regions.reference.query(SCHEMA);
  await regions.reference.query(rows());
  proxy = await textClient(regions.proxy.port);
  reference = await textClient(regions.cluster.servers[0]!.port, "reference");
  // Through the proxy: each key's rows land in its region.
  await proxy.query(rows());
  // A "char" byte with the high bit set (its text form is \ooo).
  const highBit = `UPDATE things SET c = chr(233)::"char" WHERE id = 1`;
  await proxy.query(highBit);
  await regions.reference.query(highBit);
});
afterAll(async () => {
  await proxy?.end().catch(() => undefined);
  await reference?.end().catch(() => undefined);
  await regions?.close();
});

interface Answer {
  readonly names: string[];
  readonly rows: unknown[][];
}

async function answer(client: pg.Client, sql: string, values?: unknown[]): Promise<Answer> {
  const result = await client.query({
    text: sql,
    rowMode: "array",
    ...(values === undefined ? {} : { values }),
  });
  return { names: result.fields.map((f) => f.name), rows: result.rows as unknown[][] };
}

/** Through the proxy, the reference's answer exactly (and the statement was not refused). */
async function expectSame(sql: string, values?: unknown[]): Promise<void> {
  const expected = await answer(reference, sql, values);
  const got = await answer(proxy, sql, values).catch((error: unknown) => ({ error: String(error) }));
  expect({ sql, got }).toEqual({ sql, got: expected });
}

/** Refused with 0A000 and a hint, never answered otherwise than the reference. */
async function expectRefused(sql: string, values?: unknown[]): Promise<void> {
  const error = (await answer(proxy, sql, values).then(
    () => null,
    (e: unknown) => e,
  )) as { code?: string; hint?: string; message?: string } | null;
  expect(error, sql).not.toBeNull();
  expect({ sql, code: error?.code }).toEqual({ sql, code: "0A000" });
  expect(error?.hint ?? "").not.toBe("");
}

describe("values finished in the home region keep their type exactly", () => {
  it("a whole-row reference sorted by text is the row, not its first column", async () => {
    await expectSame("SELECT t FROM things t ORDER BY t.v, t.tenant_id, t.id");
    await expectSame("SELECT u FROM users u ORDER BY u.name, u.tenant_id, u.id LIMIT 5");
    await expectSame("SELECT t.id, t FROM things t ORDER BY t.v DESC, t.tenant_id, t.id LIMIT 5");
    await expectSame("SELECT (t).v, (t).p FROM things t ORDER BY t.v, t.tenant_id, t.id LIMIT 7");
  });

  it("a whole-row reference through LATERAL", async () => {
    await expectSame(
      "SELECT t.id, x.w FROM things t, LATERAL (SELECT t AS w) x ORDER BY t.v, t.tenant_id, t.id",
    );
    await expectSame(
      "SELECT u.name, x.n FROM users u, LATERAL (SELECT u AS n) x ORDER BY 1, u.tenant_id, u.id LIMIT 4",
    );
  });

  it('groups by a composite, bit(n), varbit, "char", enum, domain, range and arrays', async () => {
    for (const column of COLUMNS)
      await expectSame(
        `SELECT ${column}, count(*) FROM things GROUP BY ${column} ORDER BY ${column} NULLS FIRST`,
      );
    await expectSame("SELECT t, count(*) FROM things t GROUP BY t ORDER BY t");
  });

  it("keeps every column's value when sorted by text in the home region", async () => {
    for (const column of COLUMNS)
      await expectSame(`SELECT ${column}, v FROM things ORDER BY v, tenant_id, id`);
  });

  it("bit(n) keeps every bit: groups of B'101' and B'100' stay apart", async () => {
    await expectSame("SELECT flags | B'001', count(*) FROM things GROUP BY 1 ORDER BY 1");
    await expectSame("SELECT DISTINCT flags FROM things ORDER BY 1");
    await expectSame("SELECT bit_or(flags), bit_and(vflags::bit(5)) FROM things");
  });

  it("gathers tables joined across keys with every type", async () => {
    await expectSame(
      `SELECT a.tenant_id, a.id, a.p, a.flags, a.c, a.m, a.pairs, a.cs, b.tenant_id
         FROM things a JOIN things b ON a.id = b.id AND a.tenant_id <> b.tenant_id
        WHERE b.tenant_id = 'bob' ORDER BY a.tenant_id, a.id`,
    );
    await expectSame(
      `SELECT a.id, a, b FROM things a JOIN things b ON a.id = b.id AND a.tenant_id <> b.tenant_id
        WHERE b.tenant_id = 'bob' ORDER BY a.tenant_id, a.id`,
    );
    await expectSame(
      `SELECT a.id, x.w FROM things a JOIN things b ON a.id = b.id AND a.tenant_id <> b.tenant_id,
              LATERAL (SELECT a AS w) x WHERE b.tenant_id = 'bob' ORDER BY a.tenant_id, a.id`,
    );
    await expectSame(
      "SELECT a.id, a FROM things a JOIN users u ON u.id = a.id AND u.tenant_id = a.tenant_id ORDER BY a.v, a.tenant_id, a.id",
    );
  });

  it("with a parameter (extended protocol)", async () => {
    await expectSame("SELECT t, c, flags FROM things t WHERE id > $1 ORDER BY v, tenant_id, id", [1]);
    await expectSame("SELECT p, flags, count(*) FROM things WHERE id <> $1 GROUP BY 1, 2 ORDER BY 1, 2", [2]);
  });

  it("refuses anonymous records with 0A000 and a hint", async () => {
    await expectRefused("SELECT row(v, id) FROM things ORDER BY v, tenant_id, id");
    await expectRefused("SELECT row(v, id) AS r, count(*) FROM things GROUP BY 1 ORDER BY 1");
    await expectRefused("SELECT array[row(v, id)] AS a FROM things ORDER BY v, tenant_id, id");
  });
});
