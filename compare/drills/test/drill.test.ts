import { describe, expect, it } from "vitest";
import { type DrillReport, drillPassed, runDrill, type Scenario, scenarioNamed } from "../src/index.js";

function scenario(name: string): Scenario {
  const found = scenarioNamed(name);
  if (found === undefined) throw new Error(`no scenario ${name}`);
  return found;
}

function expectNothingLost(report: DrillReport): void {
  expect(report.keyed.committed).toBeGreaterThan(0);
  expect(report.transfers.committed).toBeGreaterThan(0);
  expect([report.keyed.lost, report.keyed.wrong], report.keyed.samples.join("\n")).toEqual([0, 0]);
  expect([report.transfers.lost, report.transfers.wrong], report.transfers.samples.join("\n")).toEqual([
    0, 0,
  ]);
  expect(report.preparedLeft).toBe(0);
  expect(drillPassed(report)).toBe(true);
}

describe("the drills", () => {
  it("loses and half-applies nothing while the proxy is SIGKILLed and regions crash at random", async () => {
    const report = await runDrill({ scenario: scenario("mixed"), seconds: 14, seed: 20261202 });
    expect(report.proxyKills).toBeGreaterThan(0);
    expectNothingLost(report);
  });

  it("commits on both sides a transfer whose proxy died after the decision, before any COMMIT PREPARED", async () => {
    const report = await runDrill({ scenario: scenario("2pc-after-decision"), seconds: 12, seed: 20261202 });
    // At least one probe reached its point (decision written, both regions still prepared) before
    // the kill; the grading holds every probe that did to ending on both sides.
    expect(report.notes.join("\n")).toMatch(/\d+ reached\b/);
    expect(report.proxyKills).toBeGreaterThan(0);
    expectNothingLost(report);
  });

  it("frees the rows of a transfer a SIGKILLed proxy left prepared and undecided within 15 s, with the default [txn] settings and the table log", async () => {
    const report = await runDrill({ scenario: scenario("in-doubt-table"), seconds: 12, seed: 20261202 });
    const note = report.notes.find((line) => line.includes("probes killed")) ?? "";
    console.log(note);
    // Each probe reached is checked against the 15 s bound by the scenario (a failure otherwise).
    expect(note).toMatch(/^[1-9]\d* probes killed/);
    expect(report.failures).toEqual([]);
    expectNothingLost(report);
  });

  it("keeps every increment of a key one proxy moves round the regions while the other writes it", async () => {
    const report = await runDrill({ scenario: scenario("shared-move"), seconds: 12, seed: 20261202 });
    const notes = report.notes.join("\n");
    console.log(notes);
    expect(notes).toMatch(/moves of k1 through drill-a: [1-9]\d* done/);
    // The scenario checks committed = counter = recorded for k1, its rows in one region named by
    // every directory, both proxies reading it there, and no refusal but 40001 and 55P03.
    expect(report.failures).toEqual([]);
    expect(report.misrouted).toBe(0);
    expectNothingLost(report);
  });

  it("refuses geo-partitioned statements with 57P03 through both proxies while the authority is frozen, and routes again after", async () => {
    const report = await runDrill({
      scenario: scenario("shared-authority-down"),
      seconds: 12,
      seed: 20261202,
    });
    const notes = report.notes.join("\n");
    console.log(notes);
    // Every probe through either proxy past its lease was refused 57P03 (a failure otherwise).
    for (const proxy of ["drill-a", "drill-b"])
      expect(notes).toMatch(
        new RegExp(`${proxy}: first 57P03 \\d+ ms .* routing again \\d+ ms after the repair`),
      );
    expect(report.failures).toEqual([]);
    expectNothingLost(report);
  });
});
