import type { ProxySnapshot } from "../source/admin-source.js";
import { PLAN_KINDS, type PlanKind } from "../source/kinds.js";

/** What the dashboard remembers of one snapshot: enough for rates and sparklines, nothing else. */
export interface HistorySample {
  readonly atMs: number;
  readonly statements: number;
  readonly byPlan: Readonly<Record<PlanKind, number>>;
  readonly byRegion: Readonly<Record<string, number>>;
  /** Bytes received from and sent to each region's servers, cumulative. */
  readonly bytesIn: Readonly<Record<string, number>>;
  readonly bytesOut: Readonly<Record<string, number>>;
  readonly leftHome: number;
  readonly p99Ms: Readonly<Record<PlanKind, number | null>>;
  readonly clients: number;
}

/** The last `capacity` samples, oldest first. Bounded: one sample a second, a minute by default. */
export class History {
  readonly #capacity: number;
  readonly #samples: HistorySample[] = [];

  constructor(capacity = 60) {
    this.#capacity = capacity;
  }

  push(snapshot: ProxySnapshot, atMs: number): void {
    const p99Ms = {} as Record<PlanKind, number | null>;
    for (const plan of PLAN_KINDS) p99Ms[plan] = null;
    for (const summary of snapshot.latency) p99Ms[summary.plan] = summary.p99Ms;
    const bytesIn: Record<string, number> = {};
    const bytesOut: Record<string, number> = {};
    for (const region of snapshot.placement.regions) {
      bytesIn[region.id] = region.bytesIn;
      bytesOut[region.id] = region.bytesOut;
    }
    this.#samples.push({
      atMs,
      statements: snapshot.traffic.statements,
      byPlan: snapshot.traffic.byPlan,
      byRegion: snapshot.traffic.byRegion,
      bytesIn,
      bytesOut,
      leftHome: snapshot.traffic.leftHome,
      p99Ms,
      clients: snapshot.clients.connected,
    });
    if (this.#samples.length > this.#capacity) this.#samples.shift();
  }

  get samples(): readonly HistorySample[] {
    return this.#samples;
  }

  /** Per-second rates of `pick` between consecutive samples (one fewer than there are samples). */
  rates(pick: (sample: HistorySample) => number): number[] {
    const out: number[] = [];
    for (let i = 1; i < this.#samples.length; i++) {
      const previous = this.#samples[i - 1]!;
      const current = this.#samples[i]!;
      out.push(rate(pick(previous), pick(current), current.atMs - previous.atMs));
    }
    return out;
  }

  /** Rate of `pick` over the last `span` intervals; `null` before two samples exist. */
  recentRate(pick: (sample: HistorySample) => number, span = 10): number | null {
    const last = this.#samples.length - 1;
    if (last < 1) return null;
    const first = Math.max(0, last - span);
    const a = this.#samples[first]!;
    const b = this.#samples[last]!;
    return rate(pick(a), pick(b), b.atMs - a.atMs);
  }
}

function rate(before: number, after: number, elapsedMs: number): number {
  if (elapsedMs <= 0 || after < before) return 0;
  return ((after - before) * 1000) / elapsedMs;
}
