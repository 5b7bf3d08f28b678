import type { Directory, GeoConfig, Topology } from "@geo/core";
import type { HealthMonitor } from "@geo/pool";
import type { Analysis, Analyzer } from "@geo/sql";
import type { ConsoleContext } from "../console/context.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { Route } from "../routing/router.js";
import type { SchemaDriftReport } from "../server/schema-drift-report.js";
import type { Fact } from "./alert-book.js";
import type { BackendTraffic } from "./backend-traffic.js";
import type { RegionPoolStats } from "./region-pool-stats.js";

/**
 * What the proxy hands `Observability.start`: the parts it reads (configuration, topology,
 * directory, pools, planner) and the optional sources of facts kept elsewhere. Each optional part
 * only adds to what is shown, so a test or a proxy without that part leaves it out.
 */
export interface ObservabilityOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly directory: Directory;
  readonly analyzer: Analyzer;
  readonly pools: RegionPools;
  /** The live planner, for the key lookup's console context. */
  readonly plan: ConsoleContext["plan"];
  readonly log: Logger;
  /** How long the readiness check may take to get and use a home connection (default 2000 ms). */
  readonly readyTimeoutMs?: number;
  /**
   * The proxy's health monitor, when it runs one. Without it, one is started here while the admin
   * port is configured (see README.md); otherwise health follows the pools.
   */
  readonly health?: HealthMonitor;
  /**
   * Regions whose primary did not answer at start, with why: down from the first reading (health,
   * alerts, metrics) until a connection or a probe finds them up.
   */
  readonly downAtStart?: readonly { readonly region: string; readonly reason: string }[];
  /** Facts known elsewhere in the proxy (a region's collation), added to the alerts when read. */
  readonly facts?: () => readonly Fact[];
  /**
   * The analysis a route was decided from (the router's `analysisOf`): with it, the recent
   * decisions and refused shapes are recorded; without it, only counted.
   */
  readonly analysisOf?: (route: Route) => Analysis | undefined;
  /** The replicas' pools, when the topology lists replicas: in /metrics, /snapshot and alerts too. */
  readonly replicaPools?: () => readonly RegionPoolStats[];
  /** Bytes on the backend connections, by `host:port`: each region's traffic in the placement map. */
  readonly traffic?: BackendTraffic;
  /** The schema drift check's latest report: the drifted tables in /metrics and /snapshot. */
  readonly schemaDrift?: () => SchemaDriftReport;
}
