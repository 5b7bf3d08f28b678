import { describe, expect, it } from "vitest";
import { runDrill } from "../src/index.js";

describe("the transfer drill", () => {
  it("keeps every transfer all-or-none through proxy SIGKILLs and region restarts, leaving nothing prepared", async () => {
    const report = await runDrill({ seconds: 45, clients: 4, seed: 20261130 });
    expect(report.committed).toBeGreaterThan(0);
    expect(report.proxyKills + report.regionRestarts).toBeGreaterThan(3);
    expect(report.lost).toBe(0);
    expect(report.totalAfter).toBe(report.totalBefore);
    expect(report.unbalancedAccounts).toBe(0);
    expect(report.preparedLeft).toBe(0);
  });
});
