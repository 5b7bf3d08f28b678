import type {
  BackendHealth,
  EndpointRole,
  KeyState,
  LeaseState,
  PlanKind,
  ReadFinish,
  TransactionOutcome,
} from "./kinds.js";

/** One backend server of a region, as the health probes last saw it. */
export interface EndpointStatus {
  /** `host:port`, the same string used as the `endpoint` label in /metrics. */
  readonly endpoint: string;
  /** The role the topology gives it. */
  readonly role: EndpointRole;
  readonly health: BackendHealth;
  /** `true` when the server reports being in recovery; `null` before the first probe. */
  readonly inRecovery: boolean | null;
  /** Bytes of WAL a replica is behind its primary (0 for a primary; `null` when not known). */
  readonly lagBytes: number | null;
  /** Taken out of service by an operator. */
  readonly drained: boolean;
}

export interface RegionStatus {
  readonly id: string;
  readonly home: boolean;
  readonly endpoints: readonly EndpointStatus[];
}

/** Occupancy of one backend's pool. */
export interface PoolStatus {
  readonly endpoint: string;
  readonly region: string;
  readonly idle: number;
  readonly busy: number;
  /** Statements waiting for a connection. */
  readonly waiting: number;
  /** Connections the pool may open. */
  readonly max: number;
}

/** Cumulative counts since the proxy started; rates are differences between two snapshots. */
export interface TrafficCounts {
  readonly statements: number;
  readonly byPlan: Readonly<Record<PlanKind, number>>;
  /** Statements sent to each region (a statement over three regions counts once in each). */
  readonly byRegion: Readonly<Record<string, number>>;
  /** Statements that ran in at least one region other than the home region. */
  readonly leftHome: number;
  readonly multiRegionReads: Readonly<Record<ReadFinish, number>>;
  /** Errors sent to clients, by SQLSTATE. */
  readonly errors: Readonly<Record<string, number>>;
}

/** Latency of recent statements (a window of the last few hundred per plan kind), in milliseconds. */
export interface LatencySummary {
  readonly plan: PlanKind;
  /** Statements in the window the percentiles were taken over. */
  readonly samples: number;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
}

/** A two-phase commit decided but not yet acknowledged by every participant. */
export interface InDoubtTransaction {
  /** The prepared transaction's global identifier. */
  readonly gid: string;
  readonly decision: "commit" | "abort";
  readonly regions: readonly string[];
  /** Regions that have not acknowledged the decision yet. */
  readonly pending: readonly string[];
  /** ISO 8601 time of the decision. */
  readonly decidedAt: string;
}

export interface TransactionStatus {
  readonly outcomes: Readonly<Record<TransactionOutcome, number>>;
  readonly inDoubt: readonly InDoubtTransaction[];
}

/**
 * A fact the proxy knows, stated once: a backend down, a replica too far behind, a server in a role
 * the topology does not give it, a two-phase commit not acknowledged everywhere, a pool saturated.
 */
export interface Alert {
  /** Stable snake_case name; the `name` label of `geoproxy_alert`. */
  readonly name: string;
  /** What it is about (an endpoint, a transaction id, a region); the `subject` label. */
  readonly subject: string;
  readonly message: string;
  /** ISO 8601 time it became true. */
  readonly since: string;
}

export interface ClientStatus {
  readonly connected: number;
  readonly max: number;
}

export interface CacheStatus {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  readonly capacity: number;
}

/** One region on the placement map. */
export interface PlacementRegion {
  readonly id: string;
  readonly home: boolean;
  /** Keys the directory places in this region. */
  readonly keys: number;
  /** Rows moved into this region by RELOCATE and REBALANCE since the proxy started. */
  readonly rowsIn: number;
  /** Rows moved out of this region since the proxy started. */
  readonly rowsOut: number;
  /** Bytes the proxy received from this region's servers since it started (all its connections). */
  readonly bytesIn: number;
  /** Bytes the proxy sent to this region's servers since it started. */
  readonly bytesOut: number;
}

/** A move of keys running now (their statements wait until it ends). */
export interface MoveInProgress {
  readonly keys: readonly string[];
  /** The destination region. */
  readonly to: string;
  /** ISO 8601 time it started. */
  readonly startedAt: string;
}

/** Where keys live and how they move. */
export interface PlacementStatus {
  readonly regions: readonly PlacementRegion[];
  readonly moves: readonly MoveInProgress[];
  /** Moves committed since the proxy started. */
  readonly movesDone: number;
}

/**
 * How the statements of one shape were routed: the last decision, and how many statements of the
 * shape were routed since it was first seen.
 */
export interface RouteDecision {
  /** The statement with its literals lifted out (`$n` in their place), whitespace collapsed. */
  readonly shape: string;
  readonly plan: PlanKind;
  /** The regions the last statement of this shape ran in. */
  readonly regions: readonly string[];
  /**
   * How the answer was finished: `relayed` (one region), `concat`, `ordered`, `partial-aggregate`
   * or `gather` (a read over several regions), `two-phase` (a write over several), `each-region`
   * (maintenance region after region).
   */
  readonly finish: string;
  readonly count: number;
  /** ISO 8601 time of the last statement of this shape. */
  readonly lastAt: string;
}

/** A shape the planner refused, with why and how often. */
export interface RefusedShape {
  readonly shape: string;
  /** The refusal's reason, as in `geoproxy_refusals_total{reason}`. */
  readonly reason: string;
  readonly sqlstate: string;
  readonly count: number;
  /** ISO 8601 time of the last refusal of this shape. */
  readonly lastAt: string;
}

/** One region whose copy of a table is not like the reference region's. */
export interface SchemaDriftRegion {
  readonly region: string;
  /** `differs` (its columns or indexes), or `missing` (the region has no such table). */
  readonly status: "differs" | "missing";
  /** What differs, a few words per difference, `; ` between them (SHOW SCHEMA's `detail`). */
  readonly detail: string;
}

/** A configured table whose copies are not alike in every region. */
export interface SchemaDriftTable {
  /** Schema-qualified, as the catalog names it (`public.orders`). */
  readonly table: string;
  /** The regions whose copy differs from the reference region's, sorted by id. */
  readonly regions: readonly SchemaDriftRegion[];
}

/** The latest comparison of every region's copies of the configured tables (SHOW SCHEMA). */
export interface SchemaDriftStatus {
  /** ISO 8601 time of the latest check; `null` before the first. */
  readonly checkedAt: string | null;
  /** The region the others are compared with: home, or the first that answered; `null` if none did. */
  readonly reference: string | null;
  /** Tables with a copy that differs, sorted by name; empty when every copy is alike. */
  readonly tables: readonly SchemaDriftTable[];
}

/** One proxy of a shared directory, as this proxy's last visit to the authority found it. */
export interface SharedPeer {
  /** Its `[server] node`. */
  readonly node: string;
  /** Its home region. */
  readonly home: string;
  /** Its heartbeat's age; `null` for this proxy before its first visit got through. */
  readonly heartbeatAgeMs: number | null;
  /** By the heartbeat's age; this proxy's own row by its lease's age (SHOW PEERS' `lease`). */
  readonly lease: LeaseState;
  /** Client sessions it had open at its last heartbeat. */
  readonly sessions: number;
  /** Moves it announced that are not withdrawn. */
  readonly moves: number;
  /** The row of the proxy answering. */
  readonly thisProxy: boolean;
}

/** Where a shared directory (`[directory_store] shared = true`) stands, as this proxy sees it. */
export interface SharedDirectoryStatus {
  /** The region whose PostgreSQL the proxies agree in. */
  readonly authority: string;
  readonly leaseMs: number;
  /** Since the last visit to the authority that got through was sent; `null` before the first. */
  readonly leaseAgeMs: number | null;
  /** Every proxy of the directory, this one included, sorted by node. */
  readonly peers: readonly SharedPeer[];
  /** Moves holding keys here now: this proxy's own, and other proxies' it follows. */
  readonly movesHeld: { readonly own: number; readonly peers: number };
}

/** Everything the dashboard and /snapshot show, taken at one instant. Plain JSON. */
export interface ProxySnapshot {
  /** `[server] node`. */
  readonly node: string;
  /** ISO 8601 time the snapshot was taken. */
  readonly takenAt: string;
  readonly uptimeSeconds: number;
  readonly homeRegion: string;
  readonly regions: readonly RegionStatus[];
  readonly pools: readonly PoolStatus[];
  readonly traffic: TrafficCounts;
  readonly latency: readonly LatencySummary[];
  readonly transactions: TransactionStatus;
  readonly alerts: readonly Alert[];
  readonly clients: ClientStatus;
  readonly cache: CacheStatus;
  /** Keys per region, rows moved, moves running. */
  readonly placement: PlacementStatus;
  /** Recent routing decisions, one per statement shape, most recent first (bounded). */
  readonly decisions: readonly RouteDecision[];
  /** The shapes refused most often, most refused first (bounded). */
  readonly refusedShapes: readonly RefusedShape[];
  /** Tables whose copies differ between regions, at the latest schema check. */
  readonly schemaDrift: SchemaDriftStatus;
  /** The shared directory's lease and peers; absent when the directory is not shared. */
  readonly shared?: SharedDirectoryStatus;
}

/** Which region holds a key's rows. */
export interface KeyLocation {
  readonly table: string;
  readonly key: string;
  readonly region: string;
  readonly state: KeyState;
}

/** Why a key could not be located: an unknown table, a table not placed by key, a malformed key. */
export interface KeyLookupFailure {
  readonly error: string;
  /** SQLSTATE of the same refusal on the wire; `42P01` (unknown table) answers 404, others 400. */
  readonly sqlstate: string;
  readonly hint?: string;
}

/**
 * What the admin port reads from the proxy. The proxy implements it; the admin port never reaches
 * into the proxy otherwise, so this package does not depend on it.
 */
export interface AdminSource {
  /** The proxy's state now. Called once a second while the admin server runs: keep it cheap. */
  snapshot(): ProxySnapshot;
  /** The region holding `key` for `table`, through the live directory. */
  whereIs(
    table: string,
    key: string,
  ): KeyLocation | KeyLookupFailure | Promise<KeyLocation | KeyLookupFailure>;
  /** `true` when the home region is reachable: /healthz answers 200, otherwise 503. */
  ready(): Promise<boolean>;
}
