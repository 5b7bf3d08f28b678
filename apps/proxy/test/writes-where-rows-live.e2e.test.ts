import { encodeCopyData, encodeCopyDone, encodeQuery } from "@geo/proto";
import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { exchange } from "./support/side-by-side.js";

// A write reaches only the region that holds its rows: hints cannot send it elsewhere, and COPY
// FROM goes through only where every row it loads belongs to one region.
let regions: RealRegions;
let client: RawClient;

beforeAll(async () => {
  regions = await startRealRegions();
  client = await RawClient.connect({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
    timeoutMs: 5_000,
  });
});
afterAll(async () => {
  await client?.close();
  await regions?.close();
});

async function auditRows(region: "eu-west" | "us-east", action: string): Promise<number> {
  const result = await regions.direct[region].query(
    "SELECT count(*)::int AS n FROM eu_audit WHERE action = $1",
    [action],
  );
  return result.rows[0].n as number;
}

describe("hints on writes", () => {
  it("refuses a region hint that would write a strict pinned table's row in another region", async () => {
    const result = await client.query(
      "/* geo: region=us-east */ INSERT INTO eu_audit (tenant_id, action, at) VALUES ('alice', 'hinted', now())",
    );
    expect(result.error?.code).toBe("0A000");
    expect(await auditRows("us-east", "hinted")).toBe(0);
    expect(await auditRows("eu-west", "hinted")).toBe(0);
  });

  it("refuses a key hint that contradicts the key of the row written", async () => {
    const result = await client.query(
      "/* geo: key=alice */ INSERT INTO users (tenant_id, id, name, country, age) VALUES ('bob', 77, 'b', 'US', 30)",
    );
    expect(result.error?.code).toBe("0A000");
    const eu = await regions.direct["eu-west"].query(
      "SELECT count(*)::int AS n FROM users WHERE tenant_id = 'bob'",
    );
    expect(eu.rows[0].n).toBe(0);
  });

  it("lets a hint agree with where the rows live", async () => {
    const result = await client.query(
      "/* geo: region=eu-west */ INSERT INTO eu_audit (tenant_id, action, at) VALUES ('alice', 'agreed', now())",
    );
    expect(result.error).toBeUndefined();
    expect(await auditRows("eu-west", "agreed")).toBe(1);
  });
});

describe("COPY FROM", () => {
  it("loads a pinned table's rows into its region", async () => {
    const lines = await exchange(
      client,
      Buffer.concat([
        encodeQuery({ sql: "COPY eu_audit (tenant_id, action, at) FROM STDIN" }),
        encodeCopyData({
          data: Buffer.from("alice\tcopied\t2026-03-02 00:00:00+00\nalice\tcopied\t2026-03-03 00:00:00+00\n"),
        }),
        encodeCopyDone(),
      ]),
    );
    expect(lines).toContain("CommandComplete COPY 2");
    expect(await auditRows("eu-west", "copied")).toBe(2);
    expect(await auditRows("us-east", "copied")).toBe(0);
  });

  it("refuses a geo-partitioned table's COPY whose rows it cannot split: from a server file, or under a key hint", async () => {
    for (const sql of ["COPY users FROM '/tmp/users.tsv'", "/* geo: key=alice */ COPY users FROM STDIN"]) {
      const result = await client.query(sql);
      expect(result.error?.code).toBe("0A000");
    }
  });
});

describe("SQL PREPARE and EXECUTE", () => {
  it("prepares a statement that runs entirely in the region of the session's prepared statements", async () => {
    expect(
      (await client.query("PREPARE alice_orders AS SELECT count(*) FROM orders WHERE tenant_id = 'alice'"))
        .error,
    ).toBeUndefined();
    const executed = await client.query("EXECUTE alice_orders");
    const expected = await regions.reference.query("SELECT count(*) FROM orders WHERE tenant_id = 'alice'");
    expect(executed.rows).toEqual([[String(expected.rows[0].count)]]);
    expect((await client.query("DEALLOCATE alice_orders")).error).toBeUndefined();
  });
});
