import { afterAll, beforeAll } from "vitest";
import { type RealRegions, startRealRegions } from "./real-regions.js";
import { type SideBySide, sideBySide } from "./side-by-side.js";

export interface ReferencePair {
  readonly regions: RealRegions;
  /** A raw client to the reference database (every row) and one through the proxy. */
  readonly pair: SideBySide;
}

/**
 * Three real regions behind a proxy and one database holding every row, for the test file that
 * calls this at its top: started before its tests and closed after them.
 */
export function referencePair(): ReferencePair {
  let regions: RealRegions | undefined;
  let pair: SideBySide | undefined;
  beforeAll(async () => {
    regions = await startRealRegions();
    pair = await sideBySide(regions.cluster.servers[0]!, regions.proxy.port, { directDatabase: "reference" });
  });
  afterAll(async () => {
    await pair?.close();
    await regions?.close();
  });
  return {
    get regions(): RealRegions {
      if (regions === undefined) throw new Error("the regions start before the tests");
      return regions;
    },
    get pair(): SideBySide {
      if (pair === undefined) throw new Error("the regions start before the tests");
      return pair;
    },
  };
}

/** Message lines with the DataRows as a multiset: one server answers in scan order, regions one by one. */
export function rowsSorted(lines: readonly string[]): string[] {
  const rows = lines.filter((line) => line.startsWith("DataRow")).sort();
  let next = 0;
  return lines.map((line) => (line.startsWith("DataRow") ? rows[next++]! : line));
}

/** Transactions left prepared on any region's server (0 after every finished commit). */
export async function preparedAnywhere(regions: RealRegions): Promise<number> {
  let count = 0;
  for (const client of Object.values(regions.direct))
    count += (await client.query("SELECT count(*)::int AS n FROM pg_prepared_xacts")).rows[0].n;
  return count;
}
