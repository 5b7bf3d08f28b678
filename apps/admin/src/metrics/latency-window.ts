/**
 * The last `capacity` latencies of one plan kind, for exact recent percentiles on the dashboard.
 * Histograms answer "how many under 5 ms" for Prometheus; an operator looking at the page wants
 * "what is p99 now", which a fixed ring answers without buckets. Writing is one store and two adds.
 */
export class LatencyWindow {
  readonly #samples: Float64Array;
  #next = 0;
  #filled = 0;

  constructor(capacity: number) {
    this.#samples = new Float64Array(capacity);
  }

  add(seconds: number): void {
    this.#samples[this.#next] = seconds;
    this.#next = this.#next + 1 === this.#samples.length ? 0 : this.#next + 1;
    if (this.#filled < this.#samples.length) this.#filled += 1;
  }

  get size(): number {
    return this.#filled;
  }

  /** Nearest-rank percentiles of the window, in the unit added (seconds); `null` when empty. */
  percentiles(ranks: readonly number[]): (number | null)[] {
    if (this.#filled === 0) return ranks.map(() => null);
    const sorted = this.#samples.slice(0, this.#filled).sort();
    return ranks.map((rank) => {
      const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1));
      return sorted[index] ?? null;
    });
  }
}
