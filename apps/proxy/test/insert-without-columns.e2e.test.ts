import { encodeQuery } from "@geo/proto";
import type { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { exchange, type SideBySide, sideBySide } from "./support/side-by-side.js";

// INSERT without a column list across regions: the proxy reads the table's column order from
// PostgreSQL and places each row by its key, as one server holding every row would store it.
let regions: RealRegions;
let pair: SideBySide;
let proxied: RawClient;

beforeAll(async () => {
  regions = await startRealRegions();
  pair = await sideBySide(regions.cluster.servers[0]!, regions.proxy.port, { directDatabase: "reference" });
  proxied = pair.proxied;
});
afterAll(async () => {
  await pair?.close();
  await regions?.close();
});

async function same(sql: string): Promise<string[]> {
  const [expected, got] = await pair.both(encodeQuery({ sql }));
  expect(got, sql).toEqual(expected);
  return got;
}

async function regionsHolding(id: number): Promise<number[]> {
  return Promise.all(
    (["eu-west", "us-east", "ap-south"] as const).map(
      async (region) =>
        (await regions.direct[region].query("SELECT count(*)::int AS n FROM users WHERE id = $1", [id]))
          .rows[0].n as number,
    ),
  );
}

describe("INSERT without a column list across regions", () => {
  it("writes one row in its key's region, the table's first columns filled in order", async () => {
    expect(await same("INSERT INTO users VALUES ('bob', 994, 'n', 'US', 40)")).toEqual([
      "CommandComplete INSERT 0 1",
      "ReadyForQuery I",
    ]);
    expect(await regionsHolding(994)).toEqual([0, 1, 0]);
    await same("SELECT tenant_id, id, name, country, age, active FROM users WHERE id = 994");
  });

  it("splits rows of several keys over their regions and answers RETURNING * as one server", async () => {
    const lines = await same(
      "INSERT INTO users VALUES ('alice', 995, 'a', 'FR', 31, NULL, false), ('chandra', 995, 'c', 'IN', 22, NULL, true) RETURNING tenant_id, id, name, active",
    );
    expect(lines).toContain("CommandComplete INSERT 0 2");
    expect(await regionsHolding(995)).toEqual([1, 0, 1]);
  });

  it("gives PostgreSQL's own errors for a missing table and a value of the wrong type", async () => {
    expect(
      (await exchange(proxied, encodeQuery({ sql: "INSERT INTO no_such_table VALUES (1)" })))[0],
    ).toMatch(/^ErrorResponse /);
    expect((await same("INSERT INTO users VALUES ('bob', 'not a number', 'n')"))[0]).toBe(
      "ErrorResponse 22P02",
    );
    expect(await regionsHolding(997)).toEqual([0, 0, 0]);
  });

  it("runs inside a transaction block and rolls back with it", async () => {
    await same("BEGIN");
    await same("INSERT INTO users VALUES ('alice', 998, 'x')");
    await same("SELECT count(*) FROM users WHERE id = 998");
    await same("ROLLBACK");
    expect(await regionsHolding(998)).toEqual([0, 0, 0]);
  });
});
