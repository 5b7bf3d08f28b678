import type { Alert } from "@geo/admin";

/** A fact true now, before the book gives it the time it became true. */
export interface Fact {
  readonly name: AlertName;
  readonly subject: string;
  readonly message: string;
  /** When the fact itself says it began (a decision's time); otherwise the first time it was seen. */
  readonly since?: Date;
}

/** Every alert name this proxy raises: the `name` label of `geoproxy_alert` and of SHOW ALERTS. */
export const ALERT_NAMES = [
  "backend_down",
  "replica_lagging",
  "role_mismatch",
  "pool_saturated",
  "two_phase_commit_unacknowledged",
  "collation_differs",
  "sequence_ids_collide",
  "schema_drift",
  "node_claim_missing",
  "directory_unreachable",
  "directory_split",
  "move_stalled",
] as const;
export type AlertName = (typeof ALERT_NAMES)[number];

/**
 * Alerts are facts stated once: each (name, subject) is one alert for as long as it stays true,
 * with the time it became true; it disappears when it stops being true and, if it comes back,
 * is a new alert with a new time.
 */
export class AlertBook {
  readonly #since = new Map<string, Date>();

  /** The alerts for the facts true now, sorted by name then subject. */
  current(facts: readonly Fact[], now: Date = new Date()): Alert[] {
    const seen = new Set<string>();
    const alerts: Alert[] = [];
    for (const fact of facts) {
      const id = `${fact.name}\u0000${fact.subject}`;
      if (seen.has(id)) continue;
      seen.add(id);
      let since = this.#since.get(id);
      if (since === undefined) {
        since = fact.since ?? now;
        this.#since.set(id, since);
      }
      alerts.push({
        name: fact.name,
        subject: fact.subject,
        message: fact.message,
        since: since.toISOString(),
      });
    }
    for (const id of this.#since.keys()) if (!seen.has(id)) this.#since.delete(id);
    return alerts.sort((a, b) =>
      a.name === b.name ? compare(a.subject, b.subject) : compare(a.name, b.name),
    );
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
