import { type ConsoleHandler, showRows } from "./console-command.js";
import { unexpectedArgument } from "./console-errors.js";
import type { RegionPoolStats } from "./context.js";

/**
 * Columns in PgBouncer's spirit where they apply (`idle`, `busy`, `waiting`, `max`), then the
 * counters since the pool was created. `avg_wait_ms` is the mean wait of served checkouts.
 */
export const SHOW_POOLS_COLUMNS = [
  "region",
  "role",
  "endpoint",
  "database",
  "user",
  "idle",
  "busy",
  "waiting",
  "total",
  "max",
  "min",
  "resetting",
  "connecting",
  "checkouts",
  "avg_wait_ms",
  "created",
  "discarded",
  "resets",
  "timeouts",
  "queue_full",
  "connect_failures",
] as const;

function averageWait(stats: RegionPoolStats): string {
  return (stats.checkouts === 0 ? 0 : stats.waitTimeMs / stats.checkouts).toFixed(3);
}

function compare(left: RegionPoolStats, right: RegionPoolStats): number {
  const a = `${left.region}\u0000${left.role}\u0000${left.key.user}\u0000${left.key.database}`;
  const b = `${right.region}\u0000${right.role}\u0000${right.key.user}\u0000${right.key.database}`;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `SHOW POOLS`: one row per backend pool, keyed by (endpoint, database, role) and sorted by region.
 * A pool exists once something used it: the proxy opens one per region at start, others appear
 * with the first client of another role.
 */
export const showPools: ConsoleHandler = {
  syntax: "SHOW POOLS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW POOLS", argument);
    const rows = [...ctx.poolStats()]
      .sort(compare)
      .map((stats) => [
        stats.region,
        stats.role,
        `${stats.key.host}:${stats.key.port}`,
        stats.key.database,
        stats.key.user,
        String(stats.idle),
        String(stats.busy),
        String(stats.waiting),
        String(stats.total),
        String(stats.max),
        String(stats.min),
        String(stats.resetting),
        String(stats.connecting),
        String(stats.checkouts),
        averageWait(stats),
        String(stats.created),
        String(stats.discarded),
        String(stats.resets),
        String(stats.timeouts),
        String(stats.queueFull),
        String(stats.connectFailures),
      ]);
    return showRows(SHOW_POOLS_COLUMNS, rows);
  },
};
