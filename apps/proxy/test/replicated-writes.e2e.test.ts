import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { REGIONS } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * A write to a replicated table without a writer runs on every copy, in one two-phase commit, and
 * answers as one server holding the table would: one CommandComplete tag and one set of RETURNING
 * rows (the reference database, holding every row once, says what that is). When the copies
 * affected different numbers of rows they have diverged: the write is rolled back everywhere and
 * refused with an error naming the regions.
 */
let regions: RealRegions;
let proxy: pg.Client;

beforeAll(async () => {
  regions = await startRealRegions();
  proxy = new pg.Client({ host: "127.0.0.1", port: regions.proxy.port, user: "postgres", database: "shop" });
  await proxy.connect();
});
afterAll(async () => {
  await proxy?.end().catch(() => undefined);
  await regions?.close();
});
afterEach(async () => {
  for (const region of REGIONS) {
    const prepared = await regions.direct[region].query("SELECT gid FROM pg_prepared_xacts");
    expect(prepared.rows, region).toEqual([]);
  }
});

interface Answer {
  readonly command: string;
  readonly rowCount: number | null;
  readonly rows: unknown[];
}

async function run(client: pg.Client, sql: string, values?: unknown[]): Promise<Answer> {
  const result = await client.query({ text: sql, ...(values === undefined ? {} : { values }) });
  return { command: result.command, rowCount: result.rowCount, rows: result.rows };
}

/** The write through the proxy answers what the reference database answers to it. */
async function expectOneServer(sql: string, values?: unknown[]): Promise<Answer> {
  const expected = await run(regions.reference, sql, values);
  const got = await run(proxy, sql, values);
  expect({ sql, values, got }).toEqual({ sql, values, got: expected });
  return got;
}

async function namesEverywhere(codes: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const region of REGIONS) {
    const result = await regions.direct[region].query(
      "SELECT code, name, digits FROM currencies WHERE code = ANY($1) ORDER BY code",
      [codes],
    );
    out[region] = result.rows;
  }
  return out;
}

const WRITES: readonly { sql: string; values?: unknown[] }[] = [
  { sql: "INSERT INTO currencies (code, name, digits) VALUES ('JPY', 'Yen', 0)" },
  {
    sql: "INSERT INTO currencies (code, name, digits) VALUES ('GBP', 'Pound', 2), ('CHF', 'Franc', 2) RETURNING *",
  },
  { sql: "UPDATE currencies SET digits = digits + 1 WHERE code IN ('JPY', 'GBP', 'CHF')" },
  {
    sql: "UPDATE currencies SET digits = digits - 1 WHERE code IN ('JPY', 'GBP', 'CHF') RETURNING code, digits",
  },
  { sql: "INSERT INTO currencies VALUES ('JPY', 'Yen', 0) ON CONFLICT (code) DO NOTHING RETURNING code" },
  {
    sql: "INSERT INTO currencies (code, name, digits) SELECT 'X' || left(code, 2), name, digits FROM currencies WHERE code IN ('EUR', 'USD') RETURNING code",
  },
  {
    sql: "UPDATE currencies c SET digits = o.digits FROM currencies o WHERE o.code = 'EUR' AND c.code LIKE 'X%' RETURNING c.code",
  },
  { sql: "DELETE FROM currencies c USING (VALUES ('XEU')) v(code) WHERE c.code = v.code RETURNING c.code" },
  {
    sql: "WITH gone AS (DELETE FROM currencies WHERE code = 'XUS' RETURNING code) SELECT count(*) FROM gone",
  },
  {
    sql: "MERGE INTO currencies c USING (VALUES ('JPY', 'Yen!')) v(code, name) ON c.code = v.code WHEN MATCHED THEN UPDATE SET name = v.name WHEN NOT MATCHED THEN INSERT VALUES (v.code, v.name, 0)",
  },
  { sql: "DELETE FROM currencies WHERE code IN ('JPY', 'GBP', 'CHF') RETURNING code" },
];

const PARAMETERISED: readonly { sql: string; values?: unknown[] }[] = [
  { sql: "INSERT INTO currencies (code, name, digits) VALUES ($1, $2, $3)", values: ["JPY", "Yen", 0] },
  {
    sql: "INSERT INTO currencies (code, name, digits) VALUES ($1, 'Pound', 2), ('CHF', $2, 2) RETURNING *",
    values: ["GBP", "Franc"],
  },
  { sql: "UPDATE currencies SET digits = digits + $1 WHERE code IN ('JPY', 'GBP', 'CHF')", values: [1] },
  {
    sql: "UPDATE currencies SET digits = digits - $1 WHERE code IN ('JPY', 'GBP', 'CHF') RETURNING code, digits",
    values: [1],
  },
  { sql: "DELETE FROM currencies WHERE code = ANY($1) RETURNING code", values: [["JPY", "GBP", "CHF"]] },
];

describe("a write to every copy of a replicated table answers as one server", () => {
  it("simple protocol, outside a transaction block", async () => {
    for (const { sql } of WRITES) await expectOneServer(sql);
    expect(await namesEverywhere(["JPY", "GBP", "CHF"])).toEqual({
      "eu-west": [],
      "us-east": [],
      "ap-south": [],
    });
  });

  it("extended protocol, outside a transaction block", async () => {
    for (const { sql, values } of PARAMETERISED) await expectOneServer(sql, values);
  });

  it("inside a transaction block, simple and extended", async () => {
    await regions.reference.query("BEGIN");
    await proxy.query("BEGIN");
    for (const { sql } of WRITES.slice(0, 4)) await expectOneServer(sql);
    for (const { sql, values } of PARAMETERISED.slice(2, 4)) await expectOneServer(sql, values);
    await expectOneServer(WRITES[WRITES.length - 1]!.sql);
    await proxy.query("COMMIT");
    await regions.reference.query("COMMIT");
    expect(await namesEverywhere(["JPY", "GBP", "CHF"])).toEqual({
      "eu-west": [],
      "us-east": [],
      "ap-south": [],
    });
  });

  it("one multi-statement string answers each statement once", async () => {
    const sql =
      "INSERT INTO currencies VALUES ('JPY', 'Yen', 0) RETURNING code; UPDATE currencies SET digits = 1 WHERE code = 'JPY'; DELETE FROM currencies WHERE code = 'JPY'";
    const got = (await proxy.query(sql)) as unknown as pg.QueryResult[];
    expect(got.map((r) => [r.command, r.rowCount, r.rows.length])).toEqual([
      ["INSERT", 1, 1],
      ["UPDATE", 1, 0],
      ["DELETE", 1, 0],
    ]);
  });
});

describe("copies that diverged", () => {
  beforeAll(async () => {
    // A row only us-east's copy holds.
    await regions.direct["us-east"].query("INSERT INTO currencies VALUES ('ZZZ', 'stray', 0)");
  });
  afterAll(async () => {
    await regions.direct["us-east"].query("DELETE FROM currencies WHERE code = 'ZZZ'");
  });

  const UPDATE = "UPDATE currencies SET name = 'changed' WHERE code IN ('EUR', 'ZZZ')";
  const untouched = {
    "eu-west": [{ code: "EUR", name: "Euro", digits: 2 }],
    "us-east": [
      { code: "EUR", name: "Euro", digits: 2 },
      { code: "ZZZ", name: "stray", digits: 0 },
    ],
    "ap-south": [{ code: "EUR", name: "Euro", digits: 2 }],
  };

  async function refusal(
    sql: string,
    values?: unknown[],
  ): Promise<{ code?: string; message?: string; hint?: string }> {
    return (await run(proxy, sql, values).then(
      () => ({ code: "none" }),
      (error: unknown) => error as { code?: string; message?: string },
    )) as { code?: string; message?: string; hint?: string };
  }

  it("refuses a write whose row counts differ, naming the regions, and rolls it back (simple and extended)", async () => {
    for (const [sql, values] of [
      [UPDATE, undefined],
      [`${UPDATE} RETURNING code`, undefined],
      ["UPDATE currencies SET name = $1 WHERE code IN ('EUR', 'ZZZ') RETURNING code", ["changed"]],
      ["DELETE FROM currencies WHERE code = ANY($1)", [["EUR", "ZZZ"]]],
    ] as const) {
      const error = await refusal(sql, values as unknown[] | undefined);
      expect({ sql, code: error.code }).toEqual({ sql, code: "XX001" });
      expect(error.message).toContain("us-east: 2");
      expect(error.message).toContain("eu-west: 1");
      expect(error.hint ?? "").not.toBe("");
      expect(await namesEverywhere(["EUR", "ZZZ"])).toEqual(untouched);
    }
    // The session goes on.
    expect((await proxy.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("fails the transaction block it runs in; the client's ROLLBACK undoes it", async () => {
    await proxy.query("BEGIN");
    await proxy.query("UPDATE currencies SET digits = 3 WHERE code = 'USD'");
    const error = await refusal(UPDATE);
    expect(error.code).toBe("XX001");
    const next = await refusal("SELECT 1");
    expect(next.code).toBe("25P02");
    await proxy.query("ROLLBACK");
    expect(await namesEverywhere(["EUR", "ZZZ"])).toEqual(untouched);
    const usd = await namesEverywhere(["USD"]);
    for (const region of REGIONS)
      expect(usd[region], region).toEqual([{ code: "USD", name: "US dollar", digits: 2 }]);

    await proxy.query("BEGIN");
    const extended = await refusal("UPDATE currencies SET name = $1 WHERE code IN ('EUR', 'ZZZ')", ["x"]);
    expect(extended.code).toBe("XX001");
    const commit = await run(proxy, "COMMIT");
    expect(commit.command).toBe("ROLLBACK");
    expect(await namesEverywhere(["EUR", "ZZZ"])).toEqual(untouched);
  });

  it("still answers writes the copies agree on", async () => {
    await expectOneServer("UPDATE currencies SET name = name WHERE code = 'EUR' RETURNING code, name");
  });
});
