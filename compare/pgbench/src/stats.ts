/** Median and spread of a handful of per-round figures. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Median of the values (mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[middle]!;
  return (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * Nearest-rank percentile of values sorted ascending: the smallest value with at least p% of the
 * values at or below it. Nearest rank never interpolates, so p99 is a latency a transaction really had.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0]!;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p99: number;
}

/** Summarises latencies (any unit); sorts `values` in place. */
export function summarizeLatencies(values: Float64Array): LatencySummary {
  values.sort();
  let total = 0;
  for (const value of values) total += value;
  return {
    count: values.length,
    mean: values.length === 0 ? Number.NaN : total / values.length,
    p50: percentileOfSorted(values, 50),
    p99: percentileOfSorted(values, 99),
  };
}
