/**
 * Every default of the configuration, in one place. CONFIG.md documents the same values; a test
 * compares the two so they cannot drift apart.
 */
export const DEFAULTS = {
  server: {
    host: "127.0.0.1",
    port: 6432,
    node: "geoproxy",
    trustBeyondLoopback: false,
    requireAllRegionsAtStart: false,
    maxConnections: 1000,
    analysisCacheSize: 4096,
    maxMessageBytes: 64 * 1024 * 1024,
    workers: 1,
    schemaCheckIntervalMs: 60_000,
    fastLane: true,
  },
  region: {
    port: 5432,
    database: "postgres",
  },
  table: {
    residency: "none",
  },
  routing: {
    keyType: "text",
    maxReplicaLagBytes: 16 * 1024 * 1024,
    healthIntervalMs: 1_000,
    healthProbeTimeoutMs: 1_000,
    healthFailuresToDown: 3,
  },
  auth: {
    method: "trust",
    passthrough: false,
    lookup: true,
    verifierQuery:
      "SELECT rolpassword FROM pg_catalog.pg_authid WHERE rolname = $1 AND rolcanlogin AND (rolvaliduntil IS NULL OR rolvaliduntil > now())",
    verifierCacheMs: 10_000,
    failureDelayMs: 250,
    failureDelayMaxMs: 10_000,
    failureWindowMs: 600_000,
    timeoutMs: 60_000,
    startupTimeoutMs: 5_000,
    maxUnauthenticated: 100,
    maxUnauthenticatedPerAddress: 20,
  },
  pool: {
    min: 0,
    max: 20,
    connectTimeoutMs: 5_000,
    idleTimeoutMs: 300_000,
    checkoutTimeoutMs: 5_000,
    maxWaiters: 1_000,
    warm: false,
    unreachableTimeoutMs: 5_000,
    lookupTimeoutMs: 5_000,
    tcpKeepaliveMs: 10_000,
    maxPreparedStatements: 200,
    sessionReuse: false,
    mode: "transaction" as PoolMode,
  },
  tls: {
    requireClientTls: false,
    backendSslmode: "prefer",
  },
  admin: {
    host: "127.0.0.1",
    port: 9930,
    tls: false,
  },
  /** No `file` by default: every key is unlisted, so placed in the home location by its hash. */
  directory: {},
  directoryStore: {
    shared: false,
    authority: "home",
    table: "geoproxy_directory",
    pollMs: 500,
    leaseMs: 5_000,
    recordNewKeys: true,
    guard: false,
    holdMs: 5_000,
    lockTimeoutMs: 5_000,
    batch: 25,
  },
  gather: {
    maxRows: 100_000,
    maxBytes: 64 * 1024 * 1024,
  },
  txn: {
    decisionLog: "file",
    dataDir: "geoproxy-data",
    logTable: "geo_txn_decisions",
    // Recovery rolls back an undecided prepared transaction once older than the grace period and
    // looks every interval: within 15 s of its PREPARE. Those a crashed earlier run of this proxy
    // left behind with the file log go at the start-up pass (its lock proves that run has ended).
    recoveryGraceMs: 10_000,
    recoveryIntervalMs: 5_000,
    decideDeadlineMs: 5_000,
    stepTimeoutMs: 5_000,
  },
} as const;

export const PLACEMENTS = ["geo_partitioned", "global_replicated", "pinned"] as const;
export const RESIDENCIES = ["none", "strict"] as const;
export const KEY_TYPES = ["text", "integer"] as const;
export const AUTH_METHODS = ["trust", "scram-sha-256", "md5"] as const;
export const DECISION_LOGS = ["file", "table"] as const;
export const SSL_MODES = ["disable", "prefer", "require", "verify-ca", "verify-full"] as const;
/** How long a client keeps a backend connection: a transaction (and what pins it), or its session. */
export const POOL_MODES = ["transaction", "session"] as const;
export type PoolMode = (typeof POOL_MODES)[number];
