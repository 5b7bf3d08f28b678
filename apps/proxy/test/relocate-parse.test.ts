import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { parseRebalance } from "../src/console/rebalance.js";
import { parseRelocate } from "../src/console/relocate.js";

describe("RELOCATE and REBALANCE syntax", () => {
  it("reads several keys, quoted ones with spaces and doubled quotes, and the region", () => {
    expect(parseRelocate("alice, 'bob smith', 'o''neil' TO 'us-east'")).toEqual({
      keys: ["alice", "bob smith", "o'neil"],
      to: "us-east",
    });
    expect(parseRelocate("alice to us-east")).toEqual({ keys: ["alice"], to: "us-east" });
  });

  it("refuses RELOCATE without TO or with words after the region (42601)", () => {
    expect((parseRelocate("alice 'us-east'") as PgError).code).toBe("42601");
    expect((parseRelocate("alice TO 'us-east' now") as PgError).code).toBe("42601");
    expect(parseRelocate("")).toBeInstanceOf(PgError);
  });

  it("reads REBALANCE with and without BATCH", () => {
    expect(parseRebalance("eu-west TO eu-west-2 LIMIT 100")).toEqual({
      from: "eu-west",
      to: "eu-west-2",
      limit: 100,
      batch: undefined,
    });
    expect(parseRebalance("'eu-west' to 'eu-west-2' limit 5 batch 1")).toEqual({
      from: "eu-west",
      to: "eu-west-2",
      limit: 5,
      batch: 1,
    });
  });

  it("refuses REBALANCE without LIMIT, or with a batch of 0 (42601)", () => {
    expect((parseRebalance("eu-west TO eu-west-2") as PgError).code).toBe("42601");
    expect((parseRebalance("eu-west TO eu-west-2 LIMIT 5 BATCH 0") as PgError).code).toBe("42601");
  });
});
