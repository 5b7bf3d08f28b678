import type {
  Alert,
  InDoubtTransaction,
  LatencySummary,
  RegionStatus,
  TrafficCounts,
  TransactionOutcome,
} from "@geo/admin";
import type { Directory, GeoConfig, ParamValue, Plan, Topology } from "@geo/core";
import type { PgError } from "@geo/proto";
import type { Analysis, Analyzer } from "@geo/sql";
import type { PeersView } from "../directory/peer-view.js";
import type { RegionPoolStats } from "../observability/region-pool-stats.js";
import type { ReplicaService } from "../replicas/replica-service.js";
import type { SchemaDriftReport } from "../server/schema-drift-report.js";

// The primary pool set and the package index still import it from here.
export type { RegionPoolStats } from "../observability/region-pool-stats.js";

/**
 * Everything a console command may read, handed to `runConsoleCommand` for each command. The
 * console answers from the live state of this proxy: the configuration it runs with, its topology
 * and directory, its analyzer and planner, and its pools.
 */
export interface ConsoleContext {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly directory: Directory;
  readonly analyzer: Analyzer;
  /** The planner bound to the live topology and directory (what routing uses). */
  plan(analysis: Analysis, params?: readonly ParamValue[]): Plan;
  /** One entry per backend pool, with the region it serves. */
  poolStats(): readonly RegionPoolStats[];
  /** The authenticated role of the client running the command. */
  readonly user: string;
  /**
   * What the proxy observed (health, alerts, traffic, transactions in doubt, clients), for SHOW
   * HEALTH, ALERTS, STATS, IN DOUBT and CLIENTS. Absent where nothing observes (unit tests of
   * the other commands): those commands then answer 0A000.
   */
  readonly observed?: ObservedState;
  /** The last comparison of the regions' copies of each configured table (SHOW SCHEMA). */
  readonly schema?: (() => SchemaDriftReport) | undefined;
  /** Health probes and replica pools, when the topology lists replicas (DRAIN, UNDRAIN, ROUTE). */
  readonly replicas?: ReplicaService | undefined;
  /** The client's IP address: under trust authentication only local clients may DRAIN or UNDRAIN. */
  readonly clientAddress?: string | undefined;
  /** The shared directory's peers (SHOW PEERS); absent when the directory is not shared. */
  readonly peers?: PeersView | undefined;
  /**
   * An EXECUTE of an SQL prepared statement the client's session holds (it spans regions), as
   * the statement it runs, or why it cannot run; null for any other statement (ROUTE EXECUTE).
   */
  readonly heldExecute?: ((analysis: Analysis) => Analysis | PgError | null) | undefined;
}

/** The observed state the console reads; the proxy's observability module provides it. */
export interface ObservedState {
  /** Every region with its endpoints' health, in topology order. */
  regions(): readonly RegionStatus[];
  /** Alerts true now. */
  alerts(): readonly Alert[];
  /** Cumulative statement counts since the proxy started. */
  traffic(): TrafficCounts;
  /** Percentiles over the recent statements of each plan kind. */
  latency(): readonly LatencySummary[];
  transactionOutcomes(): Readonly<Record<TransactionOutcome, number>>;
  /** Two-phase commits decided and not yet acknowledged everywhere. */
  inDoubt(): readonly InDoubtTransaction[];
  /** Client connections open now. */
  clients(): readonly ConsoleClient[];
}

/** One client connection, as SHOW CLIENTS lists it. */
export interface ConsoleClient {
  readonly id: number;
  readonly user: string;
  readonly database: string;
  /** `address:port` of the client. */
  readonly address: string;
  readonly state: string;
  readonly connectedAt: Date;
  readonly statements: number;
}
