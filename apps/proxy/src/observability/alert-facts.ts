import type { HealthMonitor } from "@geo/pool";
import type { Fact } from "./alert-book.js";
import { probeFacts } from "./backend-probes.js";
import type { EndpointHealth } from "./endpoint-health.js";
import type { InDoubtLedger } from "./in-doubt-ledger.js";
import type { RegionPoolStats } from "./region-pool-stats.js";

/** Where the alerts' facts are read from at one reading. */
export interface AlertSources {
  /** The health monitor, when one probes; otherwise `health` says which primaries are down. */
  readonly monitor: HealthMonitor | undefined;
  /** The pools' view of the primaries, already updated from `pools`. */
  readonly health: EndpointHealth;
  /** The primaries' pools, as read for this reading. */
  readonly pools: readonly RegionPoolStats[];
  /** The replicas' pools, read after the primaries' health. */
  readonly replicaPools: () => readonly RegionPoolStats[];
  /** Facts known elsewhere in the proxy (a region's collation, the node claim). */
  readonly facts: () => readonly Fact[];
  readonly inDoubt: InDoubtLedger;
}

/**
 * Everything true right now that an alert states: backends down (from the monitor's probes, or
 * the pools' failed connects without one), saturated pools, the facts kept elsewhere, and
 * two-phase commits not yet acknowledged. Facts carry no memory; `AlertBook` turns them into
 * alerts that keep the time each became true, so this is read fresh at every reading.
 */
export function alertFacts(sources: AlertSources): Fact[] {
  const facts: Fact[] = [];
  const monitor = sources.monitor;
  if (monitor !== undefined) facts.push(...probeFacts(monitor));
  else {
    for (const down of sources.health.down()) {
      facts.push({
        name: "backend_down",
        subject: down.endpoint,
        message: `the primary of ${down.region} cannot be reached: opening a connection to it failed`,
        since: down.since,
      });
    }
  }
  for (const stats of [...sources.pools, ...sources.replicaPools()]) {
    if (stats.waiting > 0 && stats.total >= stats.max) {
      facts.push({
        name: "pool_saturated",
        subject: stats.name,
        message: `all ${stats.max} connections are in use and ${stats.waiting} checkout(s) wait`,
      });
    }
  }
  facts.push(...sources.facts());
  for (const txn of sources.inDoubt.list()) {
    facts.push({
      name: "two_phase_commit_unacknowledged",
      subject: txn.gid,
      message: `${txn.decision} decided, not yet acknowledged by ${txn.pending.join(", ")}`,
      since: new Date(txn.decidedAt),
    });
  }
  return facts;
}
