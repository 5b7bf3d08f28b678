import { describe, expect, it } from "vitest";
import { failureNotes, type PgbenchRun, ratio, renderReport, type TargetName } from "../src/index.js";

function run(target: TargetName, round: number, tps: number, cpu?: number): PgbenchRun {
  return {
    target,
    workload: "select-simple-1",
    round,
    measured: {
      ok: true,
      tps,
      processed: tps * 10,
      failed: 0,
      latency: { count: tps * 10, mean: 1e6 / tps, p50: 1e6 / tps, p99: 2e6 / tps },
      proxyCpuPerTransaction: cpu,
    },
  };
}

const base = {
  command: "pnpm --filter @geo/compare-pgbench run bench",
  date: "2026-01-01T00:00:00Z",
  setup: ["Machine: 2 cores"],
  workloads: ["select-simple-1"] as const,
  pointReads: undefined,
};

describe("the markdown report", () => {
  it("divides median tps for the ratios, not the mean or a single round", () => {
    const runs = [
      run("direct", 1, 1000),
      run("direct", 2, 2000),
      run("direct", 3, 1100),
      run("geoproxy", 1, 900, 20e-6),
      run("geoproxy", 2, 550, 30e-6),
      run("geoproxy", 3, 5000, 25e-6),
    ];
    const text = renderReport({ ...base, notes: [], targets: ["direct", "geoproxy"], runs });
    // Medians: direct 1100, geoproxy 900.
    expect(text).toContain("| select-only, simple, 1 client | 0.82x | — | — | — | — |");
    expect(text).toContain("| select-only, simple, 1 client | geoproxy | 900 | 550–5,000 |");
    expect(text).toContain("| 25.0 |");
    expect(text).toContain(base.command);
  });

  it("prints a dash, never a number, for a target that was not measured", () => {
    expect(ratio(undefined, 1000)).toBe("—");
    const text = renderReport({
      ...base,
      notes: ["geoproxy NOT MEASURED: not built"],
      targets: ["direct"],
      runs: [run("direct", 1, 1000)],
    });
    expect(text).toContain("- geoproxy NOT MEASURED: not built");
    expect(text).toContain("| select-only, simple, 1 client | — | — | — | — | — |");
  });

  it("explains why PgBouncer fails prepared runs in transaction pooling, once per workload", () => {
    const failedRun = (round: number): PgbenchRun => ({
      target: "pgbouncer",
      workload: "select-prepared-16",
      round,
      measured: {
        ok: false,
        error: 'prepared statement "P_0" does not exist; the above results are incomplete.',
      },
    });
    const notes = failureNotes([failedRun(1), failedRun(2)]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("failed in 2 of 2 rounds");
    expect(notes[0]).toContain("PgBouncer before 1.21");
    expect(notes[0]).not.toContain("..");
  });
});
