import type { AUTH_METHODS, KEY_TYPES, PLACEMENTS, PoolMode, RESIDENCIES, SSL_MODES } from "./defaults.js";

export type RegionId = string;
export type Placement = (typeof PLACEMENTS)[number];
export type Residency = (typeof RESIDENCIES)[number];
export type KeyType = (typeof KEY_TYPES)[number];
export type AuthMethod = (typeof AUTH_METHODS)[number];
export type SslMode = (typeof SSL_MODES)[number];

/** A PostgreSQL server: a region's primary or one of its replicas. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
  /** The database of the proxy's own connections, and of every client's when `fixedDatabase`. */
  readonly database: string;
  /**
   * The configuration named `database`: every client's connections open it, whatever database
   * the client asked for. Otherwise each client gets the database it names, as on one server.
   */
  readonly fixedDatabase: boolean;
  readonly user?: string;
  readonly password?: string;
  /** TLS to this server, overriding `[tls] backend_sslmode`. */
  readonly sslmode?: SslMode;
  /** CA file for this server, overriding `[tls] backend_ca`. */
  readonly sslrootcert?: string;
}

export interface RegionConfig {
  readonly id: RegionId;
  /** Regions that share a location are shards of it. Defaults to the id. */
  readonly location: string;
  readonly primary: Endpoint;
  readonly replicas: readonly Endpoint[];
  readonly home: boolean;
  /**
   * The region's own `[pool]` network timeouts, for its primary and its replicas: each is present
   * only when the region sets it, and `regionTimeouts` fills the rest in from `[pool]`.
   */
  readonly timeouts?: Partial<NetworkTimeouts>;
}

/** The `[pool]` timeouts of backend connections that a region may set for itself. */
export interface NetworkTimeouts {
  readonly connectTimeoutMs: number;
  readonly unreachableTimeoutMs: number;
  readonly lookupTimeoutMs: number;
  readonly tcpKeepaliveMs: number;
}

/** Where a table's rows live. */
export type TablePolicy =
  | {
      readonly table: string;
      readonly placement: "geo_partitioned";
      readonly key: string;
      readonly residency: Residency;
      /**
       * `striped`: sequences (serial, identity) of the table's columns hand out ids in a stripe of
       * their own in each region (docs/ids.md); absent, DDL that would give a column ids from a
       * sequence is refused, since each region's sequence would hand out the same ids.
       */
      readonly ids?: "striped";
    }
  | {
      readonly table: string;
      readonly placement: "global_replicated";
      /** Writes go there alone and PostgreSQL replication copies them on; without it, every copy is written. */
      readonly writer?: RegionId;
      readonly residency: "none";
    }
  | {
      readonly table: string;
      readonly placement: "pinned";
      readonly region: RegionId;
      readonly residency: Residency;
    };

/** The policy given to tables the configuration does not list, without a table name. */
export type DefaultPlacement =
  | { readonly placement: "global_replicated"; readonly writer?: RegionId }
  | { readonly placement: "pinned"; readonly region: RegionId };

/** `[server] workers`: 1 to MAX_WORKERS, or `"auto"`. */
export type WorkerCount = number | "auto";

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly node: string;
  readonly trustBeyondLoopback: boolean;
  /**
   * Refuse to start while any region's primary is unreachable (the behaviour before regions could
   * be picked up after start). Off: only the home region must answer at start.
   */
  readonly requireAllRegionsAtStart: boolean;
  readonly maxConnections: number;
  readonly analysisCacheSize: number;
  /** A client message longer than this (after login) ends its connection (54000). */
  readonly maxMessageBytes: number;
  /**
   * Worker processes serving the port, each a proxy of its own named `<node>-w<i>`; `"auto"`: one
   * per core (resolveWorkers). 1: the one process, no workers.
   */
  readonly workers: WorkerCount;
  /** How often every region's copies of the configured tables are compared again (SHOW SCHEMA). */
  readonly schemaCheckIntervalMs: number;
  /**
   * Single-region Queries outside a block are carried straight from the client's socket to an
   * idle connection and back (apps/proxy session/fast-lane.ts). Off: every statement takes the
   * general path; the answers are the same byte for byte.
   */
  readonly fastLane: boolean;
}

export interface RoutingConfig {
  readonly keyType: KeyType;
  readonly defaultPlacement?: DefaultPlacement;
  /** A replica further behind its primary than this serves no reads (parsed configs always set it). */
  readonly maxReplicaLagBytes?: number;
  /** A round of health probes of every backend starts this often. */
  readonly healthIntervalMs?: number;
  /** A probe (connect and query) slower than this fails. */
  readonly healthProbeTimeoutMs?: number;
  /** Consecutive failed probes that mark a backend down. */
  readonly healthFailuresToDown?: number;
}

export interface AuthUser {
  readonly name: string;
  readonly password?: string;
  readonly verifier?: string;
}

export interface AuthConfig {
  readonly method: AuthMethod;
  readonly users: readonly AuthUser[];
  readonly operators: readonly string[];
  readonly passthrough: boolean;
  /** Roles not in `users` are looked up in the home region with `verifierQuery`. */
  readonly lookup: boolean;
  /** Returns the stored password (SCRAM verifier or MD5 hash) of the role bound as $1. */
  readonly verifierQuery: string;
  /** How long a looked-up verifier (or its absence) is kept. */
  readonly verifierCacheMs: number;
  /** Delay before answering the first failed login from an address; doubles with each further one. */
  readonly failureDelayMs: number;
  readonly failureDelayMaxMs: number;
  /** An address's failures are forgotten after this long without another. */
  readonly failureWindowMs: number;
  /** A client that has not finished logging in after this long is disconnected. */
  readonly timeoutMs: number;
  /** A client must have sent its StartupMessage (TLS handshake included) within this long. */
  readonly startupTimeoutMs: number;
  /**
   * Connections that have not yet logged in, at most; when full, the oldest that has sent nothing
   * is closed to make room, and without one the newcomer is refused (53300).
   */
  readonly maxUnauthenticated: number;
  /** The same cap for the connections of one client address. */
  readonly maxUnauthenticatedPerAddress: number;
}

export interface PoolConfig {
  readonly min: number;
  readonly max: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly checkoutTimeoutMs: number;
  readonly maxWaiters: number;
  readonly warm: boolean;
  /**
   * A backend that leaves a statement unanswered and answers no liveness probe for this long is
   * unreachable: its waiting connections are broken and new statements fail at once until it answers.
   */
  readonly unreachableTimeoutMs: number;
  /**
   * Longest wait for a backend's answer to one of the proxy's own lookups at login: the check of a
   * client's startup settings and the stored-password (verifier) lookup. Past it the connection is
   * discarded.
   */
  readonly lookupTimeoutMs: number;
  /** TCP keepalive idle time of backend sockets (0: off). */
  readonly tcpKeepaliveMs: number;
  /**
   * Copies of clients' named statements a backend connection keeps prepared, at most; past it the
   * least recently used is closed (it is prepared again when next needed).
   */
  readonly maxPreparedStatements: number;
  /**
   * Session pooling: give a client's server connection to later clients (reset with DISCARD ALL,
   * as PgBouncer does) instead of closing it when the client leaves. Faster logins; a later
   * client may see what DISCARD ALL keeps (loaded libraries, the temporary namespace, statistics).
   */
  readonly sessionReuse: boolean;
  /** `transaction`: a connection per transaction (and while pinned); `session`: one for the client's whole session. */
  readonly mode: PoolMode;
  /** Roles whose clients get session pooling whatever `mode` says. */
  readonly sessionRoles: readonly string[];
  /** Databases whose clients get session pooling whatever `mode` says. */
  readonly sessionDatabases: readonly string[];
}

export interface TlsConfig {
  readonly cert?: string;
  readonly key?: string;
  readonly requireClientTls: boolean;
  readonly backendSslmode: SslMode;
  readonly backendCa?: string;
}

export interface AdminConfig {
  readonly host: string;
  readonly port: number;
  readonly password?: string;
  readonly tls: boolean;
}

export interface DirectoryStoreConfig {
  readonly shared: boolean;
  /** "home", "majority", or a region id. */
  readonly authority: string;
  readonly table: string;
  readonly pollMs: number;
  readonly leaseMs: number;
  readonly recordNewKeys: boolean;
  readonly guard: boolean;
  readonly holdMs: number;
  readonly lockTimeoutMs: number;
  /** Keys per atomic move when REBALANCE names no BATCH. */
  readonly batch: number;
}

export interface GatherConfig {
  readonly maxRows: number;
  readonly maxBytes: number;
}

export type DecisionLogKind = "file" | "table";

/** Cross-region commits: where their decisions are kept and how recovery finishes them. */
export interface TxnConfig {
  /** `file`: an fsynced append-only file (one proxy); `table`: a table in the home region. */
  readonly decisionLog: DecisionLogKind;
  /** Directory holding the file log when `logPath` is not given. */
  readonly dataDir: string;
  /** The file log's path; default `<dataDir>/<server.node>.decisions.log`. */
  readonly logPath?: string;
  /** The table log's table in the home region. */
  readonly logTable: string;
  /** An undecided prepared transaction younger than this is left to its coordinator. */
  readonly recoveryGraceMs: number;
  readonly recoveryIntervalMs: number;
  /**
   * Longest time from the first PREPARE to the decision; must stay below the grace period. A region
   * that has not answered its PREPARE by then is abandoned and the transaction rolled back.
   */
  readonly decideDeadlineMs: number;
  /**
   * Longest wait for a region's answer to each of the proxy's other commit statements (COMMIT
   * PREPARED, ROLLBACK PREPARED, ROLLBACK, the table log's statements, recovery's scans); past it
   * the connection is discarded and the region left to recovery.
   */
  readonly stepTimeoutMs: number;
}

/** Where the key directory is read from at start. */
export interface DirectoryConfig {
  /**
   * The directory TSV (`key<TAB>region` lines), as an absolute path: a relative `file` is resolved
   * against the configuration file's folder. Absent: every key is unlisted (placed at home).
   */
  readonly file?: string;
}

/** A validated configuration; every default filled in. */
export interface GeoConfig {
  /** The file it came from, for messages. */
  readonly file: string;
  readonly server: ServerConfig;
  readonly regions: readonly RegionConfig[];
  readonly tables: readonly TablePolicy[];
  readonly routing: RoutingConfig;
  readonly auth: AuthConfig;
  readonly pool: PoolConfig;
  readonly tls: TlsConfig;
  /** Absent when the section is absent: the admin port is off unless configured. */
  readonly admin?: AdminConfig;
  /** Absent when the section is absent: the directory is the in-memory one. */
  readonly directoryStore?: DirectoryStoreConfig;
  /** The directory file; `geoproxy serve --directory` overrides it. */
  readonly directory: DirectoryConfig;
  readonly gather: GatherConfig;
  readonly txn: TxnConfig;
}
