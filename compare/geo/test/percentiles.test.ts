import { describe, expect, it } from "vitest";
import { nearestRank, summarize } from "../src/percentiles.js";

describe("latency percentiles", () => {
  it("takes the nearest rank: the smallest sample with at least p% of samples at or below it", () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(nearestRank(samples, 50)).toBe(50);
    expect(nearestRank(samples, 95)).toBe(95);
    expect(nearestRank(samples, 99)).toBe(99);
    expect(nearestRank([7], 99)).toBe(7);
  });

  it("summarizes unsorted samples", () => {
    expect(summarize([5, 1, 3, 2, 4])).toEqual({ count: 5, p50: 3, p95: 5, p99: 5, min: 1, max: 5 });
  });
});
