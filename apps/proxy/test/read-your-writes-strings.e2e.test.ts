import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// rates is kept in every region and written at us-east alone (its writer); eu_audit lives in eu-west.
let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions(
    '\n[[tables]]\ntable = "rates"\nplacement = "global_replicated"\nwriter = "us-east"\n',
  );
  for (const region of REGIONS)
    await regions.direct[region].query("CREATE TABLE rates (code text, rate numeric)");
});
afterAll(() => regions?.close());

describe("a string of statements after the session wrote a replicated table at its writer", () => {
  it("runs each statement where its own rows are, not all of them at the writer", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    try {
      await client.query("INSERT INTO rates VALUES ('EUR', 1)");
      const results = (await client.query(
        "SELECT count(*)::int AS n FROM rates; SELECT count(*)::int AS n FROM eu_audit",
      )) as unknown as pg.QueryResult[];
      // Its own write, read at the writer; the audit rows, read in eu-west.
      expect(results.map((result) => result.rows[0].n)).toEqual([1, 1]);
    } finally {
      await client.end();
    }
  });
});
