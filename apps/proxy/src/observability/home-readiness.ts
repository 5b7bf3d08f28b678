import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";

/**
 * The home region is reachable: a pooled connection to its primary can be had and answers
 * `SELECT 1` within `timeoutMs`. A pooled connection is not trusted unused, since it may have been
 * idle since before its server went away; one that fails the query is discarded, not returned to
 * the pool, so the next checkout does not meet it again.
 */
export async function homeAnswers(
  pools: RegionPools,
  topology: Topology,
  timeoutMs: number,
): Promise<boolean> {
  const home = topology.home;
  let reachable = false;
  try {
    const lease = await pools.acquire(home.id, home.primary.user ?? "postgres");
    try {
      await lease.connection.simpleQuery("SELECT 1", { timeoutMs });
      reachable = true;
      lease.release();
    } catch (error) {
      lease.discard(`readiness check failed: ${String(error)}`);
    }
  } catch {
    reachable = false;
  }
  return reachable;
}
