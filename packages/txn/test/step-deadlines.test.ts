import { describe, expect, it } from "vitest";
import { Coordinator, isStepTimeout, Recovery } from "../src/index.js";
import { FakeConnector, FakeRegion } from "./support/fake-region.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";
import { rejection } from "./support/rejection.js";

/** Deadlines short enough for a unit test; a stalled statement is abandoned when they pass. */
const DEADLINE_MS = 50;

function setup() {
  const regions = [new FakeRegion("eu"), new FakeRegion("us")];
  const log = new MemoryDecisionLog();
  const connector = new FakeConnector(regions);
  const coordinator = new Coordinator({
    prefix: "geo_test",
    log,
    connector,
    retryBaseMs: 1,
    retryMaxMs: 2,
    decideDeadlineMs: DEADLINE_MS,
    stepTimeoutMs: DEADLINE_MS,
  });
  const recovery = new Recovery({
    coordinator,
    log,
    connector,
    regions: regions.map((r) => r.name),
    graceMs: 60_000,
    stepTimeoutMs: DEADLINE_MS,
  });
  return { regions, log, connector, coordinator, recovery };
}

describe("step deadlines", () => {
  it("aborts with a retryable 40001 naming the region when PREPARE goes unanswered, and records the abort", async () => {
    const { regions, log, coordinator } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    us.stallOn("PREPARE");
    const participants = [eu.participant(), us.participant()];
    const gid = coordinator.newGid();
    const error = await rejection(coordinator.commit(participants, { gid }));
    expect(error.code).toBe("40001");
    expect(error.region).toBe("us");
    expect(error.message).toContain('region "us"');
    expect(error.message).toContain("decide_deadline_ms");
    // The silent connection is closed, never reused; the one that prepared is rolled back.
    expect(participants[1]!.abandoned).not.toBeNull();
    expect(eu.rolledBack).toEqual([gid]);
    // The PREPARE may still land in us: the recorded abort lets recovery roll it back at once.
    expect((await log.lookup(gid))?.decision).toBe("abort");
    expect(us.sent("ROLLBACK")).toEqual([]);
    expect(coordinator.stats()).toMatchObject({ committed: 0, aborted: 1 });
  });

  it("lets recovery roll back a PREPARE that landed after its deadline", async () => {
    const { regions, coordinator, recovery } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    us.stallOn("PREPARE", true);
    const gid = coordinator.newGid();
    await rejection(coordinator.commit([eu.participant(), us.participant()], { gid }));
    expect([...us.prepared.keys()]).toEqual([gid]);
    us.clearFailures();
    const report = await recovery.runOnce();
    expect(report.rolledBack).toEqual([{ gid, region: "us" }]);
    expect(us.prepared.size + eu.prepared.size).toBe(0);
    expect(eu.committed.concat(us.committed)).toEqual([]);
  });

  it("reports a commit in doubt, never an error, when COMMIT PREPARED goes unanswered after the decision", async () => {
    const { regions, log, connector, coordinator, recovery } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    us.stallOn("COMMIT PREPARED");
    const participants = [eu.participant(), us.participant()];
    const result = await coordinator.commit(participants);
    expect(result.outcome).toBe("in-doubt");
    expect(result.unresolved).toEqual(["us"]);
    expect(participants[1]!.abandoned).not.toBeNull();
    // One try: a region that let the deadline pass is not kept waiting on by the client.
    expect(us.sent("COMMIT PREPARED")).toHaveLength(1);
    expect(connector.opened).toEqual([]);
    expect((await log.lookup(result.gid))?.decision).toBe("commit");
    expect(eu.committed).toEqual([result.gid]);
    us.clearFailures();
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([{ gid: result.gid, region: "us" }]);
    expect(us.committed).toEqual([result.gid]);
    expect(us.prepared.size).toBe(0);
  });

  it("gives up on a ROLLBACK PREPARED that goes unanswered and leaves it to recovery through the log", async () => {
    const { regions, log, coordinator } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    eu.failOn("PREPARE", Object.assign(new Error("duplicate key"), { code: "23505" }));
    us.stallOn("ROLLBACK PREPARED");
    const gid = coordinator.newGid();
    const error = await rejection(coordinator.commit([eu.participant(), us.participant()], { gid }));
    expect(error.code).toBe("23505");
    expect((await log.lookup(gid))?.decision).toBe("abort");
    expect(coordinator.inDoubt()).toEqual([expect.objectContaining({ gid, phase: "awaiting-recovery" })]);
  });

  it("names the region whose ROLLBACK goes unanswered", async () => {
    const { regions, coordinator } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    us.stallOn("ROLLBACK");
    const participants = [eu.participant(), us.participant()];
    expect(await coordinator.rollback(participants)).toEqual(["us"]);
    expect(participants[1]!.abandoned).not.toBeNull();
  });

  it("scans the regions that answer when one does not, and completes nothing that involves it", async () => {
    const { regions, log, coordinator, recovery } = setup();
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    const gid = coordinator.newGid();
    await log.decide({ gid, decision: "commit", participants: ["eu", "us"], decidedAt: 0 });
    eu.leavePrepared(gid);
    us.leavePrepared(gid);
    us.stallOn("SELECT");
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([{ gid, region: "eu" }]);
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]!.region).toBe("us");
    expect(isStepTimeout(report.failures[0]!.error)).toBe(true);
    expect(report.completed).toEqual([]);
    expect((await log.pending()).map((r) => r.gid)).toEqual([gid]);
  });
});
