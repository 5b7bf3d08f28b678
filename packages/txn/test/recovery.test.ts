import { describe, expect, it } from "vitest";
import { Coordinator, Recovery } from "../src/index.js";
import { FakeConnector, FakeRegion } from "./support/fake-region.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";

function setup(graceMs = 1000) {
  const regions = [new FakeRegion("eu"), new FakeRegion("us")];
  const log = new MemoryDecisionLog();
  const coordinator = new Coordinator({ prefix: "geo_a", log });
  const recovery = new Recovery({
    coordinator,
    log,
    connector: new FakeConnector(regions),
    regions: regions.map((r) => r.name),
    graceMs,
  });
  const [eu, us] = regions as [FakeRegion, FakeRegion];
  return { eu, us, log, coordinator, recovery };
}

describe("Recovery", () => {
  it("commits what the log decided to commit and marks the decision complete", async () => {
    const { eu, us, log, coordinator, recovery } = setup();
    const gid = coordinator.newGid();
    eu.leavePrepared(gid);
    us.leavePrepared(gid);
    await log.decide({ gid, decision: "commit", participants: ["eu", "us"], decidedAt: 1 });
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([
      { gid, region: "eu" },
      { gid, region: "us" },
    ]);
    expect(eu.committed).toEqual([gid]);
    expect(us.committed).toEqual([gid]);
    expect(report.completed).toEqual([gid]);
    expect(await log.pending()).toEqual([]);
  });

  it("leaves an undecided transaction alone within the grace period, then records an abort and rolls it back", async () => {
    const { eu, us, log, coordinator, recovery } = setup(1000);
    const gid = coordinator.newGid();
    eu.leavePrepared(gid, 10);
    const early = await recovery.runOnce();
    expect(early.waiting).toEqual([{ gid, region: "eu", ageMs: 10 }]);
    expect(eu.prepared.has(gid)).toBe(true);
    expect(coordinator.inDoubt()).toMatchObject([{ gid, phase: "awaiting-recovery", decided: false }]);

    eu.now += 1000;
    const late = await recovery.runOnce();
    expect(late.rolledBack).toEqual([{ gid, region: "eu" }]);
    expect((await log.lookup(gid))?.decision).toBe("abort");
    expect(eu.prepared.size).toBe(0);
    expect(eu.committed).toEqual([]);
    expect(us.statements.filter((s) => !s.includes("pg_prepared_xacts"))).toEqual([]);
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("rolls back at once what a previous life of its coordinator left undecided, and waits for the rest", async () => {
    const regions = [new FakeRegion("eu"), new FakeRegion("us")];
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_a", log });
    const lifeStart = 1_800_000_000_000;
    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector(regions),
      regions: regions.map((r) => r.name),
      graceMs: 60_000,
      abandonedBefore: lifeStart,
    });
    const [eu, us] = regions as [FakeRegion, FakeRegion];
    const previous = coordinator.gids.next(lifeStart - 5);
    const decided = coordinator.gids.next(lifeStart - 3);
    const current = coordinator.gids.next(lifeStart + 5);
    const otherNode = new Coordinator({ prefix: "geo_b", log: new MemoryDecisionLog() }).gids.next(
      lifeStart - 5,
    );
    for (const gid of [previous, decided, current, otherNode]) eu.leavePrepared(gid, 10);
    us.leavePrepared(previous, 10);
    us.leavePrepared(decided, 10);
    await log.decide({ gid: decided, decision: "commit", participants: ["eu", "us"], decidedAt: 1 });

    const report = await recovery.runOnce();
    expect(report.rolledBack).toEqual([
      { gid: previous, region: "eu" },
      { gid: previous, region: "us" },
    ]);
    expect((await log.lookup(previous))?.decision).toBe("abort");
    expect(report.committed).toEqual([
      { gid: decided, region: "eu" },
      { gid: decided, region: "us" },
    ]);
    // Issued by this life (or, as far as the clock says, after it began): its coordinator may still
    // decide, so it waits out the grace period. Another node's transaction is never touched.
    expect(report.waiting).toEqual([{ gid: current, region: "eu", ageMs: 10 }]);
    expect([...eu.prepared.keys()].sort()).toEqual([current, otherNode].sort());
  });

  it("never touches prepared transactions another system or another prefix issued", async () => {
    const { eu, recovery } = setup(0);
    const others = [
      "foreign_1",
      new Coordinator({ prefix: "geo_a_b", log: new MemoryDecisionLog() }).newGid(),
      new Coordinator({ prefix: "geo_ab", log: new MemoryDecisionLog() }).newGid(),
      "geo_a_not-a-unique-part",
    ];
    for (const gid of others) eu.leavePrepared(gid, 1_000_000);
    const report = await recovery.runOnce();
    expect(report.rolledBack).toEqual([]);
    expect(report.committed).toEqual([]);
    expect([...eu.prepared.keys()]).toEqual(others);
    expect(eu.sent("ROLLBACK")).toEqual([]);
  });

  it("leaves alone a transaction its coordinator is still driving, even past the grace period", async () => {
    const regions = [new FakeRegion("eu"), new FakeRegion("us")];
    const log = new MemoryDecisionLog();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const coordinator = new Coordinator({
      prefix: "geo_a",
      log,
      observer: { onStep: ({ step }) => (step === "decide" ? held : undefined) },
    });
    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector(regions),
      regions: ["eu", "us"],
      graceMs: 0,
    });
    const commit = coordinator.commit(regions.map((r) => r.participant()));
    await new Promise((r) => setTimeout(r, 5));
    for (const region of regions) region.now += 10_000;
    const report = await recovery.runOnce();
    expect(report.rolledBack).toEqual([]);
    release();
    const result = await commit;
    expect(result.outcome).toBe("committed");
    for (const region of regions) expect(region.committed).toEqual([result.gid]);
  });

  it("completes a pending decision whose transactions are no longer prepared anywhere", async () => {
    const { log, coordinator, recovery } = setup();
    const gid = coordinator.newGid();
    await log.decide({ gid, decision: "commit", participants: ["eu", "us"], decidedAt: 1 });
    const report = await recovery.runOnce();
    expect(report.completed).toEqual([gid]);
    expect(await log.pending()).toEqual([]);
  });

  it("never completes a decision another node wrote to a shared log, so compaction keeps it for that node", async () => {
    const { eu, us, log, recovery } = setup();
    // Node geo_b decided to commit and is still committing (us has it prepared): none of geo_a's business.
    const theirs = new Coordinator({ prefix: "geo_b", log }).newGid();
    eu.leavePrepared(theirs);
    us.leavePrepared(theirs);
    await log.decide({ gid: theirs, decision: "commit", participants: ["eu", "us"], decidedAt: 1 });
    const report = await recovery.runOnce();
    expect(report.completed).toEqual([]);
    expect((await log.pending()).map((record) => record.gid)).toEqual([theirs]);
    await log.compact();
    expect((await log.lookup(theirs))?.decision).toBe("commit");
    expect([...eu.prepared.keys()]).toEqual([theirs]);
  });

  it("keeps a decision pending while one of its regions cannot be scanned, and reports the failure", async () => {
    const { eu, us, log, coordinator, recovery } = setup();
    const gid = coordinator.newGid();
    eu.leavePrepared(gid);
    us.leavePrepared(gid);
    await log.decide({ gid, decision: "commit", participants: ["eu", "us"], decidedAt: 1 });
    us.down = true;
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([{ gid, region: "eu" }]);
    expect(report.failures.map((f) => f.region)).toEqual(["us"]);
    expect(report.completed).toEqual([]);
    expect((await log.pending()).map((r) => r.gid)).toEqual([gid]);
    expect(coordinator.inDoubt()).toMatchObject([{ gid, decided: true }]);
    expect(coordinator.isDecided(gid)).toBe(true);

    us.down = false;
    const next = await recovery.runOnce();
    expect(next.committed).toEqual([{ gid, region: "us" }]);
    expect(next.completed).toEqual([gid]);
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("shares one pass between concurrent runs and closes every connection it opened", async () => {
    const regions = [new FakeRegion("eu")];
    const opened: Array<{ closed: boolean }> = [];
    const connector = new FakeConnector(regions);
    const counting = {
      connect: async (region: string) => {
        const connection = (await connector.connect(region)) as unknown as { closed: boolean };
        opened.push(connection);
        return connection as never;
      },
    };
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_a", log });
    const recovery = new Recovery({ coordinator, log, connector: counting, regions: ["eu"] });
    const [a, b] = await Promise.all([recovery.runOnce(), recovery.runOnce()]);
    expect(a).toBe(b);
    expect(opened).toHaveLength(1);
    expect(opened.every((c) => c.closed)).toBe(true);
  });

  it("runs a pass at start and then periodically until stopped", async () => {
    const region = new FakeRegion("eu");
    const log = new MemoryDecisionLog();
    const coordinator = new Coordinator({ prefix: "geo_a", log });
    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector([region]),
      regions: ["eu"],
      intervalMs: 10,
    });
    const gid = coordinator.newGid();
    region.leavePrepared(gid);
    await log.decide({ gid, decision: "commit", participants: ["eu"], decidedAt: 1 });
    const first = await recovery.start();
    expect(first.committed).toEqual([{ gid, region: "eu" }]);
    const scans = () => region.statements.filter((s) => s.includes("pg_prepared_xacts")).length;
    await new Promise((r) => setTimeout(r, 60));
    expect(scans()).toBeGreaterThan(1);
    await recovery.stop();
    const stopped = scans();
    await new Promise((r) => setTimeout(r, 40));
    expect(scans()).toBe(stopped);
  });

  it("keeps going past a transaction whose log lookup fails, and settles it on a later pass", async () => {
    const { eu, log, coordinator, recovery } = setup();
    const stuck = coordinator.newGid();
    const fine = coordinator.newGid();
    eu.leavePrepared(stuck);
    eu.leavePrepared(fine);
    await log.decide({ gid: stuck, decision: "commit", participants: ["eu"], decidedAt: 1 });
    await log.decide({ gid: fine, decision: "commit", participants: ["eu"], decidedAt: 1 });
    const lookup = log.lookup.bind(log);
    log.lookup = async (gid) => {
      if (gid === stuck) throw new Error("log unreachable");
      return lookup(gid);
    };
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([{ gid: fine, region: "eu" }]);
    expect(report.failures).toMatchObject([{ gid: stuck }]);
    log.lookup = lookup;
    expect((await recovery.runOnce()).committed).toEqual([{ gid: stuck, region: "eu" }]);
    expect(eu.prepared.size).toBe(0);
  });

  it("cannot decide differently from a slow coordinator in another process: the first decision holds", async () => {
    const regions = [new FakeRegion("eu"), new FakeRegion("us")];
    const log = new MemoryDecisionLog();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = new Coordinator({
      prefix: "geo_a",
      log,
      observer: { onStep: ({ step }) => (step === "decide" ? held : undefined) },
    });
    // Another process with the same prefix and log, which knows nothing of the slow one's transaction.
    const elsewhere = new Recovery({
      coordinator: new Coordinator({ prefix: "geo_a", log }),
      log,
      connector: new FakeConnector(regions),
      regions: ["eu", "us"],
      graceMs: 1000,
    });
    const commit = slow.commit(regions.map((r) => r.participant()));
    await new Promise((r) => setTimeout(r, 5));
    for (const region of regions) region.now += 5000;
    const report = await elsewhere.runOnce();
    expect(report.rolledBack.map((a) => a.region)).toEqual(["eu", "us"]);
    release();
    await expect(commit).rejects.toMatchObject({ code: "40001" });
    for (const region of regions) {
      expect(region.committed).toEqual([]);
      expect(region.prepared.size).toBe(0);
    }
  });
});
