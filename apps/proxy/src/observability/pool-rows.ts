import type { PoolStatus } from "@geo/admin";
import { endpointName } from "./endpoint-health.js";
import type { RegionPoolStats } from "./region-pool-stats.js";

/**
 * One row per endpoint: its pools (one per database and role) summed. A proxy keeps a pool per
 * database and role, but /metrics and /snapshot label pools by endpoint, so each endpoint is one
 * series there however many logins use it.
 */
export function poolRows(pools: readonly RegionPoolStats[]): PoolStatus[] {
  const byEndpoint = new Map<
    string,
    { region: string; idle: number; busy: number; waiting: number; max: number }
  >();
  for (const stats of pools) {
    const endpoint = endpointName(stats.key);
    const row = byEndpoint.get(endpoint) ?? { region: stats.region, idle: 0, busy: 0, waiting: 0, max: 0 };
    row.idle += stats.idle;
    row.busy += stats.busy;
    row.waiting += stats.waiting;
    row.max += stats.max;
    byEndpoint.set(endpoint, row);
  }
  return [...byEndpoint].map(([endpoint, row]) => ({ endpoint, ...row }));
}
