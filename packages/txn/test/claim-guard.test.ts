import { describe, expect, it } from "vitest";
import { type ClaimGuard, Coordinator, nodeClaimNotHeld, Recovery } from "../src/index.js";
import { FakeConnector, FakeRegion } from "./support/fake-region.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";
import { rejection } from "./support/rejection.js";

/** A claim held in the regions of `held`, which the test changes as it goes. */
function claimOver(held: Set<string>): ClaimGuard {
  return {
    held: (region) => held.has(region),
    refusal: (regions) => {
      const missing = regions.filter((region) => !held.has(region));
      return missing.length === 0 ? null : nodeClaimNotHeld("n1", missing);
    },
  };
}

function setup(held: Set<string>) {
  const regions = ["eu", "us"].map((name) => new FakeRegion(name));
  const log = new MemoryDecisionLog();
  const coordinator = new Coordinator({ prefix: "geo_n1", log, claim: claimOver(held) });
  return { regions, log, coordinator, participants: () => regions.map((r) => r.participant()) };
}

describe("the coordinator and recovery under a claim", () => {
  it("refuses a commit over a region it does not hold before anything is prepared, rolling back the open blocks", async () => {
    const { regions, log, coordinator, participants } = setup(new Set(["eu"]));
    const error = await rejection(coordinator.commit(participants()));
    expect(error).toMatchObject({ code: "55000", region: "us" });
    for (const region of regions) expect(region.statements).toEqual(["ROLLBACK"]);
    expect(await log.pending()).toEqual([]);
    expect(coordinator.stats().aborted).toBe(1);
  });

  it("rolls back instead of deciding when the claim is lost while preparing", async () => {
    const held = new Set(["eu", "us"]);
    const regions = ["eu", "us"].map((name) => new FakeRegion(name));
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({
      prefix: "geo_n1",
      log,
      claim: claimOver(held),
      // The claim in us goes once every region has prepared, before the decision.
      observer: { onStep: (event) => void (event.step === "prepared" && held.delete("us")) },
    });
    const error = await rejection(coordinator.commit(regions.map((r) => r.participant())));
    expect(error).toMatchObject({ code: "55000" });
    expect([...log.records.values()].filter(({ record }) => record.decision === "commit")).toEqual([]);
    for (const region of regions) {
      expect(region.prepared.size).toBe(0);
      expect(region.sent("COMMIT PREPARED")).toEqual([]);
      expect(region.sent("ROLLBACK PREPARED")).toHaveLength(1);
    }
  });

  it("has recovery leave a region it does not hold unscanned and untouched", async () => {
    const held = new Set(["eu"]);
    const { regions, log, coordinator } = setup(held);
    const gid = coordinator.newGid();
    for (const region of regions) region.leavePrepared(gid, 60_000);
    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector(regions),
      regions: ["eu", "us"],
      graceMs: 0,
      claim: claimOver(held),
    });
    const report = await recovery.runOnce();
    expect(report.failures.map((failure) => failure.region)).toEqual(["us"]);
    expect(report.rolledBack).toEqual([{ gid, region: "eu" }]);
    expect(regions[1]!.prepared.has(gid)).toBe(true);
    expect(regions[1]!.statements.filter((sql) => sql.includes("PREPARED"))).toEqual([]);
  });
});
