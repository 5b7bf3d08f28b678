import type { Registry } from "prom-client";

/**
 * A labelled histogram whose observations are three number writes: prom-client's own Histogram
 * hashes the label set on every observe, which costs more than the rest of the statement's
 * bookkeeping together. It is registered in a prom-client Registry as a metric object (the
 * `get()` shape prom-client's own metrics return), so the exposition is still prom-client's.
 */
export class BucketHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #label: string;
  readonly #bounds: Float64Array;
  readonly #boundLabels: string[];
  readonly #series = new Map<L, { counts: Float64Array; sum: number; count: number }>();

  constructor(options: {
    name: string;
    help: string;
    label: string;
    values: readonly L[];
    bounds: readonly number[];
  }) {
    this.name = options.name;
    this.help = options.help;
    this.#label = options.label;
    const bounds = [...options.bounds].sort((a, b) => a - b);
    this.#bounds = Float64Array.from(bounds);
    this.#boundLabels = [...bounds.map((b) => String(b)), "+Inf"];
    for (const value of options.values) {
      this.#series.set(value, { counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 });
    }
  }

  register(registry: Registry): void {
    // A metric object with name, help, type and get() is what the registry reads.
    registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  observe(labelValue: L, value: number): void {
    const series = this.#series.get(labelValue);
    if (series === undefined) return;
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.counts[i]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /** Called by the registry at scrape time: cumulative buckets, then sum and count, per series. */
  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: { labels: Record<string, string>; value: number; metricName: string }[];
  } {
    const values: { labels: Record<string, string>; value: number; metricName: string }[] = [];
    for (const [labelValue, series] of this.#series) {
      let cumulative = 0;
      for (let i = 0; i < series.counts.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          labels: { [this.#label]: labelValue, le: this.#boundLabels[i]! },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({
        labels: { [this.#label]: labelValue },
        value: series.sum,
        metricName: `${this.name}_sum`,
      });
      values.push({
        labels: { [this.#label]: labelValue },
        value: series.count,
        metricName: `${this.name}_count`,
      });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The registry's resetMetrics() calls this; a proxy's histogram only ever grows, so it keeps its counts. */
  reset(): void {}
}
