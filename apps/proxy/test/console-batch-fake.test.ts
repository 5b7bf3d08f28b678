import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, startFakeRegions } from "./support/fake-regions.js";

let regions: FakeRegions;

beforeAll(async () => {
  const options = { unknownStatements: "empty" as const, rules: [] };
  regions = await startFakeRegions({ "eu-west": options, "us-east": options, "ap-south": options });
});
afterAll(() => regions.close());

async function raw(): Promise<RawClient> {
  return RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app", timeoutMs: 5000 });
}

describe("console commands in a multi-statement query", () => {
  it("answers each console command of the string in turn, and none reaches PostgreSQL", async () => {
    const client = await raw();
    const before = regions.fakes["eu-west"].statements.length;
    const result = await client.query("SHOW REGIONS; WHERE IS users alice");
    expect(result.error).toBeUndefined();
    expect(result.tags).toEqual(["SHOW", "SELECT 1"]);
    expect(result.rows.filter((row) => row[0] === "eu-west")).toHaveLength(1);
    expect(result.rows.at(-1)).toEqual(["users", "alice", "eu-west", "resident"]);
    expect(result.status).toBe("I");
    expect(regions.fakes["eu-west"].statements.slice(before).map((s) => s.sql)).not.toContainEqual(
      expect.stringMatching(/regions/i),
    );
    await client.close();
  });

  it("answers the proxy's own SHOW STATS and SHOW CLIENTS in one string, beside SQL", async () => {
    const client = await raw();
    const result = await client.query("SHOW STATS; SHOW CLIENTS; SELECT 1");
    expect(result.error).toBeUndefined();
    expect(result.tags).toHaveLength(3);
    expect(result.status).toBe("I");
    const sent = Object.values(regions.fakes).flatMap((fake) => fake.statements.map((s) => s.sql));
    expect(sent.filter((sql) => /show\s+(stats|clients)/i.test(sql))).toEqual([]);
    await client.close();
  });

  it("refuses RELOCATE inside a multi-statement query with 0A000 and a hint, and stays usable", async () => {
    const client = await raw();
    const result = await client.query("SELECT 1; RELOCATE alice TO us-east");
    expect(result.error?.code).toBe("0A000");
    expect(result.error?.hint).toMatch(/as a query of its own/);
    expect(result.status).toBe("I");
    expect((await client.query("SHOW REGIONS")).error).toBeUndefined();
    await client.close();
  });
});
