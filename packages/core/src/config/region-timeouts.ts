import type { NetworkTimeouts, RegionConfig } from "./types.js";

/**
 * The network timeouts of a region's backends (its primary and its replicas): each one the region
 * sets in `[[topology.regions]]`, else `[pool]`'s.
 *
 * @example
 * const eu = config.regions.find((region) => region.id === "eu-west")!;
 * regionTimeouts(config.pool, eu).connectTimeoutMs; // 800 when eu-west sets connect_timeout_ms = 800
 */
export function regionTimeouts(
  pool: NetworkTimeouts,
  region: Pick<RegionConfig, "timeouts">,
): NetworkTimeouts {
  const own = region.timeouts;
  return {
    connectTimeoutMs: own?.connectTimeoutMs ?? pool.connectTimeoutMs,
    unreachableTimeoutMs: own?.unreachableTimeoutMs ?? pool.unreachableTimeoutMs,
    lookupTimeoutMs: own?.lookupTimeoutMs ?? pool.lookupTimeoutMs,
    tcpKeepaliveMs: own?.tcpKeepaliveMs ?? pool.tcpKeepaliveMs,
  };
}
