import { describe, expect, it } from "vitest";
import { Coordinator, type CoordinatorOptions, Recovery, type TxnStepEvent } from "../src/index.js";
import { FakeConnector, FakeRegion, pgError } from "./support/fake-region.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";
import { rejection } from "./support/rejection.js";

function setup(names = ["eu", "us", "ap"], options: Partial<CoordinatorOptions> = {}) {
  const regions = names.map((n) => new FakeRegion(n));
  const log = new MemoryDecisionLog();
  const steps: TxnStepEvent[] = [];
  const coordinator = new Coordinator({
    prefix: "geo_test",
    log,
    retryBaseMs: 1,
    retryMaxMs: 2,
    observer: { onStep: (event) => void steps.push(event) },
    ...options,
  });
  const participants = () => regions.map((r) => r.participant());
  return { regions, log, coordinator, steps, participants };
}

describe("Coordinator.commit", () => {
  it("has every participant prepared and none told to commit at the moment the decision is written", async () => {
    const { regions, log, coordinator, participants } = setup();
    let checked = false;
    log.onDecide = (record) => {
      for (const region of regions) {
        expect(region.prepared.has(record.gid)).toBe(true);
        expect(region.sent("COMMIT PREPARED")).toEqual([]);
      }
      checked = true;
    };
    const result = await coordinator.commit(participants());
    expect(checked).toBe(true);
    expect(result.outcome).toBe("committed");
    for (const region of regions) {
      expect(region.statements).toEqual([
        `PREPARE TRANSACTION '${result.gid}'`,
        `COMMIT PREPARED '${result.gid}'`,
      ]);
    }
  });

  it("reports the steps in protocol order: all prepared, decide, decided, then the commits", async () => {
    const { coordinator, steps, participants } = setup(["eu", "us"]);
    await coordinator.commit(participants());
    const names = steps.map((s) => s.step);
    const decide = names.indexOf("decide");
    expect(names.slice(0, decide).filter((s) => s === "prepared")).toHaveLength(2);
    expect(names[decide + 1]).toBe("decided");
    expect(names.slice(0, decide)).not.toContain("commit-prepared");
    expect(names.slice(decide).filter((s) => s === "committed-prepared")).toHaveLength(2);
    expect(names.at(-1)).toBe("completed");
  });

  it("commits everywhere, completes the decision and counts one commit", async () => {
    const { regions, log, coordinator, participants } = setup();
    const { gid, unresolved } = await coordinator.commit(participants());
    expect(unresolved).toEqual([]);
    for (const region of regions) {
      expect(region.committed).toEqual([gid]);
      expect(region.prepared.size).toBe(0);
    }
    expect((await log.lookup(gid))?.decision).toBe("commit");
    expect(await log.pending()).toEqual([]);
    expect(coordinator.stats()).toEqual({ committed: 1, aborted: 0, inDoubt: 0 });
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("rolls everything back and rejects with the participant's own error when one refuses PREPARE", async () => {
    const { regions, log, coordinator, participants } = setup();
    regions[1]!.failOn(
      "PREPARE",
      Object.assign(pgError("23505", "duplicate key value"), { detail: "Key (id)=(1)" }),
    );
    const gid = coordinator.newGid();
    const error = await rejection(coordinator.commit(participants(), { gid }));
    expect(error.code).toBe("23505");
    expect(error.region).toBe("us");
    expect(error.detail).toBe("Key (id)=(1)");
    expect(regions[0]!.rolledBack).toEqual([gid]);
    expect(regions[2]!.rolledBack).toEqual([gid]);
    expect(regions[1]!.sent("ROLLBACK")).toEqual(["ROLLBACK"]);
    for (const region of regions) {
      expect(region.prepared.size).toBe(0);
      expect(region.committed).toEqual([]);
    }
    expect(await log.lookup(gid)).toBeUndefined();
    expect(coordinator.stats().aborted).toBe(1);
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("rejects with a retryable 40001 when a participant's connection fails during PREPARE", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    regions[1]!.failOn("PREPARE", pgError(undefined, "Connection terminated unexpectedly"));
    const error = await rejection(coordinator.commit(participants()));
    expect(error.code).toBe("40001");
    expect(regions[0]!.prepared.size).toBe(0);
    expect(regions[0]!.committed).toEqual([]);
  });

  it("prefers a participant's own refusal over another's lost connection", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    regions[0]!.failOn("PREPARE", pgError(undefined, "Connection terminated unexpectedly"));
    regions[1]!.failOn("PREPARE", pgError("40001", "could not serialize access"));
    const error = await rejection(coordinator.commit(participants()));
    expect(error.code).toBe("40001");
    expect(error.region).toBe("us");
  });

  it("treats PREPARE answered with ROLLBACK (a transaction that had already failed) as a refusal", async () => {
    const { regions, log, coordinator } = setup(["eu", "us"]);
    const gid = coordinator.newGid();
    const error = await rejection(
      coordinator.commit([regions[0]!.participant(), regions[1]!.participant("failed-transaction")], { gid }),
    );
    expect(error.code).toBe("40001");
    expect(regions[0]!.rolledBack).toEqual([gid]);
    expect(regions[1]!.prepared.size).toBe(0);
    expect(await log.lookup(gid)).toBeUndefined();
  });

  it("records an abort when a rollback cannot reach a prepared participant, so recovery need not wait", async () => {
    const { regions, log, coordinator, participants } = setup(["eu", "us"]);
    regions[0]!.failOn("PREPARE", pgError("23505", "duplicate key value"));
    regions[1]!.failOn("ROLLBACK PREPARED", pgError(undefined, "connection lost"), 1);
    const gid = coordinator.newGid();
    await rejection(coordinator.commit(participants(), { gid }));
    expect((await log.lookup(gid))?.decision).toBe("abort");
    expect(regions[1]!.prepared.has(gid)).toBe(true);
    expect(coordinator.inDoubt()).toMatchObject([{ gid, phase: "awaiting-recovery", decided: false }]);

    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector(regions),
      regions: ["eu", "us"],
      graceMs: 60_000,
    });
    const report = await recovery.runOnce();
    expect(report.rolledBack).toEqual([{ gid, region: "us" }]);
    expect(regions[1]!.prepared.size).toBe(0);
    expect(regions[1]!.committed).toEqual([]);
    expect(coordinator.inDoubt()).toEqual([]);
  });

  it("never undoes a decided commit when COMMIT PREPARED fails: in doubt until recovery commits it", async () => {
    const { regions, log, coordinator, participants } = setup(["eu", "us"]);
    regions[1]!.failOn("COMMIT PREPARED", pgError("57P01", "terminating connection"), 1);
    const result = await coordinator.commit(participants());
    expect(result).toEqual({ gid: result.gid, outcome: "in-doubt", unresolved: ["us"] });
    expect(coordinator.isDecided(result.gid)).toBe(true);
    expect(regions[0]!.committed).toEqual([result.gid]);
    expect(regions[1]!.prepared.has(result.gid)).toBe(true);
    for (const region of regions) expect(region.sent("ROLLBACK")).toEqual([]);
    expect(coordinator.inDoubt()).toMatchObject([
      { gid: result.gid, participants: ["eu", "us"], decided: true, unresolved: ["us"] },
    ]);
    expect(coordinator.stats()).toEqual({ committed: 0, aborted: 0, inDoubt: 1 });

    const recovery = new Recovery({
      coordinator,
      log,
      connector: new FakeConnector(regions),
      regions: ["eu", "us"],
    });
    const report = await recovery.runOnce();
    expect(report.committed).toEqual([{ gid: result.gid, region: "us" }]);
    expect(report.completed).toEqual([result.gid]);
    expect(regions[1]!.committed).toEqual([result.gid]);
    expect(coordinator.inDoubt()).toEqual([]);
    expect(await log.pending()).toEqual([]);
  });

  it("retries COMMIT PREPARED on a fresh connection from the connector", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    const connector = new FakeConnector(regions);
    const withConnector = new Coordinator({
      prefix: coordinator.prefix,
      log: new MemoryDecisionLog(),
      connector,
      retryBaseMs: 1,
      retryMaxMs: 2,
    });
    regions[1]!.failOn("COMMIT PREPARED", pgError(undefined, "connection reset"), 2);
    const result = await withConnector.commit(participants());
    expect(result.outcome).toBe("committed");
    expect(connector.opened).toEqual(["us", "us"]);
    expect(regions[1]!.committed).toEqual([result.gid]);
  });

  it("retries a cancelled COMMIT PREPARED on the same connection, without a connector", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    regions[1]!.failOn("COMMIT PREPARED", pgError("57014", "canceling statement due to user request"), 1);
    const result = await coordinator.commit(participants());
    expect(result.outcome).toBe("committed");
    expect(regions[1]!.sent("COMMIT PREPARED")).toHaveLength(2);
    expect(regions[1]!.committed).toEqual([result.gid]);
  });

  it("counts 'does not exist' on COMMIT PREPARED as already committed", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    regions[1]!.failOn("COMMIT PREPARED", pgError("42704", "prepared transaction does not exist"));
    const result = await coordinator.commit(participants());
    expect(result.outcome).toBe("committed");
  });

  it("says a transaction is decided exactly from the moment its decision is durable", async () => {
    const seen: Array<[string, boolean]> = [];
    const { coordinator, participants } = setup(["eu", "us"], {
      observer: {
        onStep: ({ step, gid, region }) => {
          if (region === undefined || region === "eu") seen.push([step, coordinator.isDecided(gid)]);
        },
      },
    });
    const { gid } = await coordinator.commit(participants());
    expect(seen).toEqual([
      ["prepare", false],
      ["prepared", false],
      ["decide", false],
      ["decided", true],
      ["commit-prepared", true],
      ["committed-prepared", true],
      ["completed", true],
    ]);
    expect(coordinator.isDecided(gid)).toBe(true);
    expect(coordinator.isDecided(coordinator.newGid())).toBe(false);
  });

  it("leaves the transaction prepared and in doubt with 08007 when the decision log fails", async () => {
    const { regions, log, coordinator, participants } = setup(["eu", "us"]);
    log.failDecide = new Error("EIO: i/o error, fdatasync");
    const gid = coordinator.newGid();
    const error = await rejection(coordinator.commit(participants(), { gid }));
    expect(error.code).toBe("08007");
    for (const region of regions) {
      expect(region.prepared.has(gid)).toBe(true);
      expect(region.sent("COMMIT PREPARED")).toEqual([]);
      expect(region.sent("ROLLBACK")).toEqual([]);
    }
    expect(coordinator.isDecided(gid)).toBe(false);
    expect(coordinator.inDoubt()).toMatchObject([{ gid, phase: "awaiting-recovery", decided: false }]);
  });

  it("aborts when recovery decided to roll back first: the earlier decision wins", async () => {
    const { regions, log, coordinator, participants } = setup(["eu", "us"]);
    const gid = coordinator.newGid();
    await log.decide({ gid, decision: "abort", participants: ["eu", "us"], decidedAt: 0 });
    const error = await rejection(coordinator.commit(participants(), { gid }));
    expect(error.code).toBe("40001");
    for (const region of regions) {
      expect(region.committed).toEqual([]);
      expect(region.rolledBack).toEqual([gid]);
    }
    expect(coordinator.isDecided(gid)).toBe(false);
  });

  it("aborts instead of deciding when preparing outlived the decide deadline", async () => {
    let now = 0;
    const { regions, log, participants } = setup(["eu", "us"]);
    const slow = new Coordinator({
      prefix: "geo_test",
      log,
      decideDeadlineMs: 100,
      clock: () => now,
      observer: {
        onStep: ({ step }) => {
          if (step === "prepared") now += 80;
        },
      },
    });
    const gid = slow.newGid();
    const error = await rejection(slow.commit(participants(), { gid }));
    expect(error.code).toBe("40001");
    expect(await log.lookup(gid)).toBeUndefined();
    for (const region of regions) expect(region.rolledBack).toEqual([gid]);
  });

  it("refuses an empty participant list, a region twice and a gid it did not issue", async () => {
    const { regions, coordinator } = setup(["eu"]);
    expect((await rejection(coordinator.commit([]))).code).toBe("22023");
    expect(
      (await rejection(coordinator.commit([regions[0]!.participant(), regions[0]!.participant()]))).code,
    ).toBe("22023");
    const foreign = new Coordinator({ prefix: "other", log: new MemoryDecisionLog() }).newGid();
    expect((await rejection(coordinator.commit([regions[0]!.participant()], { gid: foreign }))).code).toBe(
      "22023",
    );
    expect(regions[0]!.statements).toEqual([]);
  });

  it("refuses a gid that a commit under way is already using", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { regions, coordinator } = setup(["eu"], {
      observer: { onStep: ({ step }) => (step === "decide" ? held : undefined) },
    });
    const gid = coordinator.newGid();
    const first = coordinator.commit([regions[0]!.participant()], { gid });
    expect((await rejection(coordinator.commit([regions[0]!.participant()], { gid }))).code).toBe("42710");
    release();
    expect((await first).outcome).toBe("committed");
  });

  it("rolls back open transactions and names the regions whose ROLLBACK failed", async () => {
    const { regions, coordinator, participants } = setup(["eu", "us"]);
    regions[1]!.failOn("ROLLBACK", pgError(undefined, "connection lost"));
    expect(await coordinator.rollback(participants())).toEqual(["us"]);
    expect(regions[0]!.statements).toEqual(["ROLLBACK"]);
  });

  it("lists a transaction as in doubt while it is being prepared, with its participants and age", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { coordinator, participants } = setup(["eu", "us"], {
      observer: { onStep: ({ step }) => (step === "decide" ? held : undefined) },
    });
    const commit = coordinator.commit(participants());
    await new Promise((r) => setTimeout(r, 5));
    const listed = coordinator.inDoubt();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ participants: ["eu", "us"], phase: "deciding", decided: false });
    expect(listed[0]!.ageMs).toBeGreaterThanOrEqual(0);
    release();
    await commit;
    expect(coordinator.inDoubt()).toEqual([]);
  });
});
