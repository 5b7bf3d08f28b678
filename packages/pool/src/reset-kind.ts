/**
 * How much of a session must be undone before a pooled connection serves another client.
 * - `none`: nothing changed.
 * - `settings`: only run-time settings changed (SET, set_config); `RESET ALL` (with the role and
 *   session authorization reset first: pool.ts `RESET_SETTINGS`) undoes them and keeps
 *   server-side prepared statements, so the proxy's lazily prepared statements survive.
 * - `full`: anything else (temp tables, LISTEN, SQL-level PREPARE, SET ROLE, session advisory
 *   locks, WITH HOLD cursors, a transaction left open); `DISCARD ALL` undoes it all.
 */
export const ResetKind = {
  none: "none",
  settings: "settings",
  full: "full",
} as const;
export type ResetKind = (typeof ResetKind)[keyof typeof ResetKind];

function rank(kind: ResetKind): number {
  switch (kind) {
    case ResetKind.none:
      return 0;
    case ResetKind.settings:
      return 1;
    case ResetKind.full:
      return 2;
  }
}

/** The kind that undoes both. */
export function strongerReset(a: ResetKind, b: ResetKind): ResetKind {
  return rank(a) >= rank(b) ? a : b;
}
