import type { InDoubtTransaction } from "@geo/admin";

interface Entry {
  readonly gid: string;
  readonly decision: "commit" | "abort";
  readonly regions: readonly string[];
  readonly pending: Set<string>;
  readonly decidedAt: Date;
}

/**
 * Two-phase commits decided but not yet acknowledged by every participant: what SHOW IN DOUBT,
 * the admin port and the `two_phase_commit_unacknowledged` alert show. The commit coordinator
 * tells it three things, each as it happens:
 *
 * @example
 * ```ts
 * const ledger = runtime.observability.inDoubt;
 * ledger.decided(gid, "commit", ["eu-west", "us-east"]); // the decision is durable
 * ledger.acknowledged(gid, "eu-west"); // COMMIT PREPARED answered in eu-west
 * ledger.acknowledged(gid, "us-east"); // the last one: the entry goes
 * ```
 */
export class InDoubtLedger {
  readonly #entries = new Map<string, Entry>();

  /** A decision was made durable for a transaction prepared in `regions`. */
  decided(
    gid: string,
    decision: "commit" | "abort",
    regions: readonly string[],
    at: Date = new Date(),
  ): void {
    this.#entries.set(gid, {
      gid,
      decision,
      regions: [...regions],
      pending: new Set(regions),
      decidedAt: at,
    });
  }

  /** `region` carried out the decision (COMMIT PREPARED or ROLLBACK PREPARED answered). */
  acknowledged(gid: string, region: string): void {
    const entry = this.#entries.get(gid);
    if (entry === undefined) return;
    entry.pending.delete(region);
    if (entry.pending.size === 0) this.#entries.delete(gid);
  }

  /** Recovery finished the transaction everywhere (or found nothing left to do). */
  settled(gid: string): void {
    this.#entries.delete(gid);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Oldest decision first. */
  list(): InDoubtTransaction[] {
    return [...this.#entries.values()]
      .sort((a, b) => a.decidedAt.getTime() - b.decidedAt.getTime())
      .map((entry) => ({
        gid: entry.gid,
        decision: entry.decision,
        regions: entry.regions,
        pending: entry.regions.filter((region) => entry.pending.has(region)),
        decidedAt: entry.decidedAt.toISOString(),
      }));
  }
}
