import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Coordinator, Recovery, TxnError } from "../src/index.js";
import { FakeConnector, FakeRegion, pgError } from "./support/fake-region.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";

const STATEMENTS = ["PREPARE TRANSACTION", "COMMIT PREPARED", "ROLLBACK PREPARED", "ROLLBACK"] as const;

const failureArb = fc.record({
  region: fc.integer({ min: 0, max: 2 }),
  statement: fc.constantFrom(...STATEMENTS),
  code: fc.constantFrom(undefined, "23505", "40001", "57P01", "57014"),
  times: fc.integer({ min: 1, max: 6 }),
  afterEffect: fc.boolean(),
});

describe("all or none", () => {
  it("ends every region committed or every region not, with nothing prepared, whatever fails and when", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(failureArb, { maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        async (failures, logFails, withConnector) => {
          const regions = ["eu", "us", "ap"].map((name) => new FakeRegion(name));
          const log = new MemoryDecisionLog();
          if (logFails) log.failDecide = new Error("EIO");
          const connector = new FakeConnector(regions);
          const coordinator = new Coordinator({
            prefix: "geo_p",
            log,
            retryBaseMs: 0,
            retryMaxMs: 0,
            commitAttempts: 3,
            ...(withConnector ? { connector } : {}),
          });
          for (const f of failures) {
            const error = pgError(f.code, `injected ${f.statement}`);
            regions[f.region]!.failOn(f.statement, error, f.times, f.afterEffect);
          }
          const gid = coordinator.newGid();
          let told: "committed" | "aborted" | "unknown";
          try {
            await coordinator.commit(
              regions.map((r) => r.participant()),
              { gid },
            );
            told = "committed";
          } catch (error) {
            expect(error).toBeInstanceOf(TxnError);
            told = (error as TxnError).code === "08007" ? "unknown" : "aborted";
          }
          // Heal the world, let the grace period pass, and recover.
          for (const r of regions) {
            r.clearFailures();
            r.now += 120_000;
          }
          log.failDecide = undefined;
          const recovery = new Recovery({
            coordinator,
            log,
            connector,
            regions: ["eu", "us", "ap"],
            graceMs: 60_000,
          });
          await recovery.runOnce();

          const committed = regions.map((r) => r.committed.includes(gid));
          expect(new Set(committed).size).toBe(1);
          for (const r of regions) expect(r.prepared.size).toBe(0);
          if (told === "committed") expect(committed[0]).toBe(true);
          if (told === "aborted") expect(committed[0]).toBe(false);
          expect(coordinator.inDoubt()).toEqual([]);
          expect(await log.pending()).toEqual([]);
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 300) },
    );
  });
});
