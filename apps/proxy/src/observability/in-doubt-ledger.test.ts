import { describe, expect, it } from "vitest";
import { InDoubtLedger } from "./in-doubt-ledger.js";

describe("InDoubtLedger", () => {
  it("lists a decision until every region acknowledged it, with the regions still pending", () => {
    const ledger = new InDoubtLedger();
    ledger.decided("gid-1", "commit", ["eu-west", "us-east", "ap-south"], new Date("2026-11-30T10:00:00Z"));
    ledger.acknowledged("gid-1", "us-east");
    expect(ledger.list()).toEqual([
      {
        gid: "gid-1",
        decision: "commit",
        regions: ["eu-west", "us-east", "ap-south"],
        pending: ["eu-west", "ap-south"],
        decidedAt: "2026-11-30T10:00:00.000Z",
      },
    ]);
    ledger.acknowledged("gid-1", "eu-west");
    ledger.acknowledged("gid-1", "ap-south");
    expect(ledger.list()).toEqual([]);
    expect(ledger.size).toBe(0);
  });

  it("lists the oldest decision first and drops one recovery settled", () => {
    const ledger = new InDoubtLedger();
    ledger.decided("late", "abort", ["eu-west"], new Date("2026-11-30T10:05:00Z"));
    ledger.decided("early", "commit", ["us-east"], new Date("2026-11-30T10:01:00Z"));
    expect(ledger.list().map((txn) => txn.gid)).toEqual(["early", "late"]);
    ledger.settled("early");
    expect(ledger.list().map((txn) => txn.gid)).toEqual(["late"]);
  });

  it("ignores acknowledgements of transactions it does not hold", () => {
    const ledger = new InDoubtLedger();
    ledger.acknowledged("unknown", "eu-west");
    expect(ledger.list()).toEqual([]);
  });
});
