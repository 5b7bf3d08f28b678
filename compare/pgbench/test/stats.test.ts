import { describe, expect, it } from "vitest";
import { median, percentileOfSorted, spread, summarizeLatencies } from "../src/index.js";

describe("statistics", () => {
  it("takes the middle value of an odd count and the mean of the middle two of an even count", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("reports median, min and max of per-round figures", () => {
    expect(spread([120, 100, 110])).toEqual({ median: 110, min: 100, max: 120 });
  });

  it("uses the nearest rank, so a percentile is always a latency some transaction had", () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentileOfSorted(sorted, 50)).toBe(50);
    expect(percentileOfSorted(sorted, 99)).toBe(99);
    expect(percentileOfSorted(Float64Array.from([1, 2, 3]), 99)).toBe(3);
    expect(percentileOfSorted(Float64Array.from([7]), 50)).toBe(7);
  });

  it("summarises unsorted latencies into count, mean, p50 and p99", () => {
    const latencies = Float64Array.from([...Array.from({ length: 98 }, () => 100), 1000, 5000]);
    latencies.reverse();
    expect(summarizeLatencies(latencies)).toEqual({ count: 100, mean: 158, p50: 100, p99: 1000 });
  });
});
