import { dirname, isAbsolute, resolve } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { ConfigError } from "../errors/config-error.js";
import {
  AUTH_METHODS,
  DECISION_LOGS,
  DEFAULTS,
  KEY_TYPES,
  PLACEMENTS,
  POOL_MODES,
  RESIDENCIES,
  SSL_MODES,
} from "./defaults.js";
import { FieldReader } from "./field-reader.js";
import { keyLines } from "./key-lines.js";
import type {
  AdminConfig,
  AuthConfig,
  AuthUser,
  DefaultPlacement,
  DirectoryConfig,
  DirectoryStoreConfig,
  Endpoint,
  GatherConfig,
  GeoConfig,
  NetworkTimeouts,
  PoolConfig,
  RegionConfig,
  RoutingConfig,
  ServerConfig,
  TablePolicy,
  TlsConfig,
  TxnConfig,
} from "./types.js";
import { readWorkers, workersConflict } from "./workers.js";

const TOP_LEVEL = [
  "server",
  "topology",
  "tables",
  "routing",
  "auth",
  "pool",
  "tls",
  "admin",
  "directory",
  "directory_store",
  "gather",
  "txn",
] as const;
const MAX_PORT = 65_535;
const MAX_MS = 86_400_000;

/**
 * The network timeouts `[pool]` sets for every backend and a region may set for its own, with
 * their ranges: one table, so both places accept exactly the same values.
 */
const NETWORK_FIELDS = [
  { field: "connect_timeout_ms", key: "connectTimeoutMs", min: 1 },
  // Under 10 ms the guard's checks would come too close together to tell silence from latency.
  { field: "unreachable_timeout_ms", key: "unreachableTimeoutMs", min: 10 },
  { field: "lookup_timeout_ms", key: "lookupTimeoutMs", min: 1 },
  { field: "tcp_keepalive_ms", key: "tcpKeepaliveMs", min: 0 },
] as const satisfies readonly { field: string; key: keyof NetworkTimeouts; min: number }[];
const NETWORK_FIELD_NAMES = NETWORK_FIELDS.map((entry) => entry.field);

/**
 * Parses and validates a configuration. A file holding only `[[topology.regions]]` and
 * `[[tables]]` is a complete configuration too (enough for `geoproxy explain`): every
 * other section takes its defaults.
 *
 * @example
 * const config = parseConfig(text, "geoproxy.toml");
 * config.regions.find((region) => region.home)?.id; // "eu-west"
 */
export function parseConfig(text: string, file = "<config>"): GeoConfig {
  let document: Record<string, unknown>;
  try {
    document = parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new ConfigError({
        code: "syntax",
        file,
        line: error.line,
        detail: error.message.split("\n")[0] ?? "invalid TOML",
        cause: error,
      });
    }
    throw error;
  }
  const root = new FieldReader(file, keyLines(text), "", document);
  root.onlyKnown(TOP_LEVEL);

  const regions = readRegions(root);
  const regionIds = regions.map((region) => region.id);
  const homeId = regions.find((region) => region.home)!.id;
  const tables = readTables(root, regionIds);
  const directoryStore = readDirectoryStore(root.table("directory_store"), regionIds);
  const admin = readAdmin(root.table("admin"));
  const server = readServer(root.table("server"));
  const txn = readTxn(root.table("txn"));
  const conflict = workersConflict(
    { directoryStore, txn },
    server.workers,
    `workers = ${JSON.stringify(server.workers)}`,
  );
  if (conflict !== null) root.fail("invalid_value", conflict.path, conflict.detail);
  return {
    file,
    server,
    regions,
    tables,
    routing: readRouting(root.table("routing"), regionIds, homeId),
    auth: readAuth(root.table("auth"), regions),
    pool: readPool(root.table("pool")),
    tls: readTls(root.table("tls")),
    gather: readGather(root.table("gather")),
    txn,
    directory: readDirectory(root.table("directory"), file),
    ...(admin === undefined ? {} : { admin }),
    ...(directoryStore === undefined ? {} : { directoryStore }),
  };
}

function readServer(reader: FieldReader | undefined): ServerConfig {
  const d = DEFAULTS.server;
  if (reader === undefined) return { ...d };
  reader.onlyKnown([
    "host",
    "port",
    "node",
    "trust_beyond_loopback",
    "require_all_regions_at_start",
    "max_connections",
    "analysis_cache_size",
    "max_message_bytes",
    "workers",
    "schema_check_interval_ms",
    "fast_lane",
  ]);
  const workers = readWorkers(reader, d.workers);
  return {
    host: reader.string("host", d.host),
    port: reader.integer("port", d.port, 0, MAX_PORT),
    node: reader.string("node", d.node),
    trustBeyondLoopback: reader.boolean("trust_beyond_loopback", d.trustBeyondLoopback),
    requireAllRegionsAtStart: reader.boolean("require_all_regions_at_start", d.requireAllRegionsAtStart),
    maxConnections: reader.integer("max_connections", d.maxConnections, 1, 1_000_000),
    analysisCacheSize: reader.integer("analysis_cache_size", d.analysisCacheSize, 0, 10_000_000),
    // PostgreSQL's own limit is 1 GiB - 1; a client's message is buffered whole before it is handled.
    maxMessageBytes: reader.integer("max_message_bytes", d.maxMessageBytes, 8192, 0x3fffffff),
    workers,
    // Each check reads two catalog queries per region; under a second it would load the servers.
    schemaCheckIntervalMs: reader.integer("schema_check_interval_ms", d.schemaCheckIntervalMs, 1000, MAX_MS),
    fastLane: reader.boolean("fast_lane", d.fastLane),
  };
}

function readEndpoint(reader: FieldReader): Endpoint {
  reader.onlyKnown(["host", "port", "database", "user", "password", "sslmode", "sslrootcert"]);
  const user = reader.string("user");
  const password = reader.string("password");
  const sslmode = reader.choice("sslmode", SSL_MODES);
  const sslrootcert = reader.string("sslrootcert");
  const database = reader.string("database");
  return {
    host: reader.requiredString("host"),
    port: reader.integer("port", DEFAULTS.region.port, 1, MAX_PORT),
    database: database ?? DEFAULTS.region.database,
    fixedDatabase: database !== undefined,
    ...(user === undefined ? {} : { user }),
    ...(password === undefined ? {} : { password }),
    ...(sslmode === undefined ? {} : { sslmode }),
    ...(sslrootcert === undefined ? {} : { sslrootcert }),
  };
}

function readRegions(root: FieldReader): RegionConfig[] {
  const topology = root.table("topology");
  if (topology === undefined) {
    root.fail("missing_field", "topology.regions", "at least one [[topology.regions]] is required");
  }
  topology.onlyKnown(["regions"]);
  const readers = topology.tables("regions");
  if (readers.length === 0) {
    topology.fail("missing_field", "regions", "at least one [[topology.regions]] is required");
  }
  const seen = new Set<string>();
  const regions = readers.map((reader): RegionConfig => {
    reader.onlyKnown(["id", "location", "primary", "replicas", "home", ...NETWORK_FIELD_NAMES]);
    const id = reader.requiredString("id");
    if (seen.has(id)) reader.fail("duplicate", "id", `region ${id} is declared twice`);
    seen.add(id);
    const primary = reader.table("primary");
    if (primary === undefined)
      return reader.fail("missing_field", "primary", 'is required: { host = "...", port = 5432 }');
    const timeouts = readNetworkTimeouts(reader);
    return {
      id,
      location: reader.string("location", id),
      primary: readEndpoint(primary),
      replicas: reader.tables("replicas").map(readEndpoint),
      home: reader.boolean("home", false),
      ...(Object.keys(timeouts).length === 0 ? {} : { timeouts }),
    };
  });
  const homes = regions.filter((region) => region.home);
  if (homes.length !== 1) {
    const at = homes.length === 0 ? 0 : regions.indexOf(homes[1]!);
    readers[at]!.fail(
      "invalid_value",
      "home",
      homes.length === 0
        ? "exactly one region must set home = true; none does"
        : `exactly one region must set home = true; ${homes.map((region) => region.id).join(" and ")} do`,
      regions.map((region) => region.id),
    );
  }
  return regions;
}

/** The network timeouts written in a `[pool]` or `[[topology.regions]]` table, and only those. */
function readNetworkTimeouts(reader: FieldReader): Partial<NetworkTimeouts> {
  const timeouts: { -readonly [K in keyof NetworkTimeouts]?: number } = {};
  for (const { field, key, min } of NETWORK_FIELDS) {
    // The fallback is never used: the field is present.
    if (reader.has(field)) timeouts[key] = reader.integer(field, 0, min, MAX_MS);
  }
  return timeouts;
}

function readTables(root: FieldReader, regionIds: readonly string[]): TablePolicy[] {
  const seen = new Set<string>();
  return root.tables("tables").map((reader) => {
    reader.onlyKnown(["table", "placement", "key", "writer", "region", "residency", "ids"]);
    const table = reader.requiredString("table");
    if (!/^[^.\s]+(\.[^.\s]+)?$/.test(table)) {
      reader.fail("invalid_value", "table", `${JSON.stringify(table)} is not a table name or schema.table`);
    }
    if (seen.has(table)) reader.fail("duplicate", "table", `table ${table} has two policies`);
    seen.add(table);
    const policy = readPolicy(reader, regionIds);
    return { table, ...policy } as TablePolicy;
  });
}

type PolicyBody =
  | { placement: "geo_partitioned"; key: string; residency: "none" | "strict"; ids?: "striped" }
  | { placement: "global_replicated"; writer?: string; residency: "none" }
  | { placement: "pinned"; region: string; residency: "none" | "strict" };

/** How a geo-partitioned table's sequences hand out ids (docs/ids.md). */
const ID_CHOICES = ["refuse", "striped"] as const;

function readPolicy(reader: FieldReader, regionIds: readonly string[]): PolicyBody {
  const placement = reader.choice("placement", PLACEMENTS);
  if (placement === undefined) reader.fail("missing_field", "placement", "is required", PLACEMENTS);
  const residency = reader.choice("residency", RESIDENCIES, DEFAULTS.table.residency);
  const forbid = (field: string, why: string) => {
    if (reader.has(field)) reader.fail("unknown_field", field, `does not apply to ${placement}: ${why}`);
  };
  switch (placement) {
    case "geo_partitioned": {
      forbid("writer", "a geo-partitioned row is written where its key lives");
      forbid("region", "a geo-partitioned row lives where its key lives");
      const ids = reader.choice("ids", ID_CHOICES, "refuse");
      const key = reader.requiredString("key");
      return ids === "striped" ? { placement, key, residency, ids } : { placement, key, residency };
    }
    case "global_replicated": {
      forbid("ids", "each copy's sequence is the same sequence replicated or written everywhere alike");
      forbid("key", "a replicated table is not partitioned");
      forbid(
        "region",
        "a replicated table has a copy in every region (use writer to name where it is written)",
      );
      if (residency !== "none") {
        reader.fail("invalid_value", "residency", "a replicated table has a copy in every region", ["none"]);
      }
      const writer = reader.choice("writer", regionIds);
      return writer === undefined
        ? { placement, residency: "none" }
        : { placement, writer, residency: "none" };
    }
    case "pinned": {
      forbid("ids", "a pinned table's ids come from one region's sequence");
      forbid("key", "a pinned table lives whole in one region");
      forbid("writer", "a pinned table is written in its region");
      const region = reader.choice("region", regionIds);
      if (region === undefined) reader.fail("missing_field", "region", "is required for pinned", regionIds);
      return { placement, region, residency };
    }
  }
}

function readRouting(
  reader: FieldReader | undefined,
  regionIds: readonly string[],
  homeId: string,
): RoutingConfig {
  if (reader === undefined) return { keyType: DEFAULTS.routing.keyType, ...readReplicaRouting(undefined) };
  reader.onlyKnown([
    "key_type",
    "default_placement",
    "max_replica_lag_bytes",
    "health_interval_ms",
    "health_probe_timeout_ms",
    "health_failures_to_down",
  ]);
  const keyType = reader.choice("key_type", KEY_TYPES, DEFAULTS.routing.keyType);
  const replicas = readReplicaRouting(reader);
  const raw = reader.object["default_placement"];
  if (raw === undefined || raw === "none") return { keyType, ...replicas };
  const inner = reader.table("default_placement");
  if (inner === undefined) return { keyType, ...replicas };
  inner.onlyKnown(["placement", "writer", "region"]);
  const placement = inner.choice("placement", ["pinned", "global_replicated"] as const);
  let defaultPlacement: DefaultPlacement;
  switch (placement) {
    case undefined:
      return inner.fail("missing_field", "placement", "is required", ["pinned", "global_replicated"]);
    case "pinned": {
      if (inner.has("writer")) inner.fail("unknown_field", "writer", "does not apply to pinned");
      defaultPlacement = { placement, region: inner.choice("region", regionIds, homeId) };
      break;
    }
    case "global_replicated": {
      if (inner.has("region")) inner.fail("unknown_field", "region", "does not apply to global_replicated");
      const writer = inner.choice("writer", regionIds);
      defaultPlacement = writer === undefined ? { placement } : { placement, writer };
      break;
    }
  }
  return { keyType, defaultPlacement, ...replicas };
}

type ReplicaRouting = Required<
  Pick<
    RoutingConfig,
    "maxReplicaLagBytes" | "healthIntervalMs" | "healthProbeTimeoutMs" | "healthFailuresToDown"
  >
>;

function readReplicaRouting(reader: FieldReader | undefined): ReplicaRouting {
  const d = DEFAULTS.routing;
  if (reader === undefined)
    return {
      maxReplicaLagBytes: d.maxReplicaLagBytes,
      healthIntervalMs: d.healthIntervalMs,
      healthProbeTimeoutMs: d.healthProbeTimeoutMs,
      healthFailuresToDown: d.healthFailuresToDown,
    };
  return {
    maxReplicaLagBytes: reader.integer(
      "max_replica_lag_bytes",
      d.maxReplicaLagBytes,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    healthIntervalMs: reader.integer("health_interval_ms", d.healthIntervalMs, 10, MAX_MS),
    healthProbeTimeoutMs: reader.integer("health_probe_timeout_ms", d.healthProbeTimeoutMs, 10, MAX_MS),
    healthFailuresToDown: reader.integer("health_failures_to_down", d.healthFailuresToDown, 1, 1_000),
  };
}

function readAuth(reader: FieldReader | undefined, regions: readonly RegionConfig[]): AuthConfig {
  const d = DEFAULTS.auth;
  const { method, ...defaults } = d;
  if (reader === undefined) return { method, users: [], operators: [], ...defaults };
  reader.onlyKnown([
    "method",
    "users",
    "operators",
    "passthrough",
    "lookup",
    "verifier_query",
    "verifier_cache_ms",
    "failure_delay_ms",
    "failure_delay_max_ms",
    "failure_window_ms",
    "timeout_ms",
    "startup_timeout_ms",
    "max_unauthenticated",
    "max_unauthenticated_per_address",
  ]);
  const users = reader.tables("users").map((user): AuthUser => {
    user.onlyKnown(["name", "password", "verifier"]);
    const password = user.string("password");
    const verifier = user.string("verifier");
    if (password !== undefined && verifier !== undefined) {
      user.fail("invalid_value", "verifier", "give either password or verifier, not both");
    }
    return {
      name: user.requiredString("name"),
      ...(password === undefined ? {} : { password }),
      ...(verifier === undefined ? {} : { verifier }),
    };
  });
  const chosen = reader.choice("method", AUTH_METHODS, d.method);
  if (chosen === "trust") refuseTrustWithPasswords(reader, users, regions);
  return {
    method: chosen,
    users,
    operators: reader.stringList("operators"),
    passthrough: reader.boolean("passthrough", d.passthrough),
    lookup: reader.boolean("lookup", d.lookup),
    verifierQuery: reader.string("verifier_query", d.verifierQuery),
    verifierCacheMs: reader.integer("verifier_cache_ms", d.verifierCacheMs, 0, MAX_MS),
    failureDelayMs: reader.integer("failure_delay_ms", d.failureDelayMs, 0, MAX_MS),
    failureDelayMaxMs: reader.integer("failure_delay_max_ms", d.failureDelayMaxMs, 0, MAX_MS),
    failureWindowMs: reader.integer("failure_window_ms", d.failureWindowMs, 0, MAX_MS),
    timeoutMs: reader.integer("timeout_ms", d.timeoutMs, 1, MAX_MS),
    startupTimeoutMs: reader.integer("startup_timeout_ms", d.startupTimeoutMs, 1, MAX_MS),
    maxUnauthenticated: reader.integer("max_unauthenticated", d.maxUnauthenticated, 1, 1_000_000),
    maxUnauthenticatedPerAddress: reader.integer(
      "max_unauthenticated_per_address",
      d.maxUnauthenticatedPerAddress,
      1,
      1_000_000,
    ),
  };
}

/**
 * Trust lets every client in without a word, so a secret given for a user is never checked. A
 * verifier then serves nothing at all; a password still logs in to the backends whose endpoint
 * names no `user` (as the client's role), and only then has a meaning. Written where it can have
 * none, it says the operator meant the proxy to ask for it: refused. The error points at `method`
 * when it was written, else at the secret, and lists the methods that check one.
 */
function refuseTrustWithPasswords(
  reader: FieldReader,
  users: readonly AuthUser[],
  regions: readonly RegionConfig[],
): void {
  const backendsUsePasswords = regions.some((region) =>
    [region.primary, ...region.replicas].some((endpoint) => endpoint.user === undefined),
  );
  const index = users.findIndex(
    (user) => user.verifier !== undefined || (user.password !== undefined && !backendsUsePasswords),
  );
  if (index < 0) return;
  const user = users[index]!;
  const secret = user.password !== undefined ? "password" : "verifier";
  const checking = AUTH_METHODS.filter((method) => method !== "trust");
  const unused =
    secret === "verifier"
      ? "would never be asked for"
      : "would never be asked for (and every endpoint names its own user, so no backend login uses it either)";
  const detail = `method "trust" checks no password, so the ${secret} of auth.users "${user.name}" ${unused}; choose a method that checks it, or remove the secret from auth.users`;
  if (reader.has("method")) reader.fail("invalid_value", "method", detail, checking);
  reader.fail("invalid_value", `users[${index}].${secret}`, detail, checking);
}

function readPool(reader: FieldReader | undefined): PoolConfig {
  const d = DEFAULTS.pool;
  if (reader === undefined) return { ...d, sessionRoles: [], sessionDatabases: [] };
  reader.onlyKnown([
    "min",
    "max",
    "connect_timeout_ms",
    "idle_timeout_ms",
    "checkout_timeout_ms",
    "max_waiters",
    "warm",
    "unreachable_timeout_ms",
    "lookup_timeout_ms",
    "tcp_keepalive_ms",
    "max_prepared_statements",
    "session_reuse",
    "mode",
    "session_roles",
    "session_databases",
  ]);
  const timeouts = readNetworkTimeouts(reader);
  const pool: PoolConfig = {
    min: reader.integer("min", d.min, 0, 10_000),
    max: reader.integer("max", d.max, 1, 10_000),
    idleTimeoutMs: reader.integer("idle_timeout_ms", d.idleTimeoutMs, 0, MAX_MS),
    checkoutTimeoutMs: reader.integer("checkout_timeout_ms", d.checkoutTimeoutMs, 1, MAX_MS),
    maxWaiters: reader.integer("max_waiters", d.maxWaiters, 0, 10_000_000),
    warm: reader.boolean("warm", d.warm),
    connectTimeoutMs: timeouts.connectTimeoutMs ?? d.connectTimeoutMs,
    unreachableTimeoutMs: timeouts.unreachableTimeoutMs ?? d.unreachableTimeoutMs,
    lookupTimeoutMs: timeouts.lookupTimeoutMs ?? d.lookupTimeoutMs,
    tcpKeepaliveMs: timeouts.tcpKeepaliveMs ?? d.tcpKeepaliveMs,
    maxPreparedStatements: reader.integer("max_prepared_statements", d.maxPreparedStatements, 1, 1_000_000),
    sessionReuse: reader.boolean("session_reuse", d.sessionReuse),
    mode: reader.choice("mode", POOL_MODES, d.mode),
    sessionRoles: reader.has("session_roles") ? reader.stringList("session_roles") : [],
    sessionDatabases: reader.has("session_databases") ? reader.stringList("session_databases") : [],
  };
  if (pool.min > pool.max) reader.fail("invalid_value", "min", `min (${pool.min}) exceeds max (${pool.max})`);
  return pool;
}

function readTls(reader: FieldReader | undefined): TlsConfig {
  const d = DEFAULTS.tls;
  if (reader === undefined) return { requireClientTls: d.requireClientTls, backendSslmode: d.backendSslmode };
  reader.onlyKnown(["cert", "key", "require_client_tls", "backend_sslmode", "backend_ca"]);
  const cert = reader.string("cert");
  const key = reader.string("key");
  const backendCa = reader.string("backend_ca");
  if ((cert === undefined) !== (key === undefined)) {
    reader.fail("missing_field", cert === undefined ? "cert" : "key", "cert and key are given together");
  }
  const requireClientTls = reader.boolean("require_client_tls", d.requireClientTls);
  if (requireClientTls && cert === undefined) {
    reader.fail("missing_field", "cert", "require_client_tls needs a certificate");
  }
  return {
    requireClientTls,
    backendSslmode: reader.choice("backend_sslmode", SSL_MODES, d.backendSslmode),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(backendCa === undefined ? {} : { backendCa }),
  };
}

function readAdmin(reader: FieldReader | undefined): AdminConfig | undefined {
  if (reader === undefined) return undefined;
  const d = DEFAULTS.admin;
  reader.onlyKnown(["host", "port", "password", "tls"]);
  const password = reader.string("password");
  return {
    host: reader.string("host", d.host),
    port: reader.integer("port", d.port, 0, MAX_PORT),
    tls: reader.boolean("tls", d.tls),
    ...(password === undefined ? {} : { password }),
  };
}

function readDirectory(reader: FieldReader | undefined, configFile: string): DirectoryConfig {
  if (reader === undefined) return {};
  reader.onlyKnown(["file"]);
  const file = reader.string("file");
  if (file === undefined) return {};
  // Relative to the configuration's own folder, so the file works from any working directory.
  return { file: isAbsolute(file) ? file : resolve(dirname(configFile), file) };
}

function readDirectoryStore(
  reader: FieldReader | undefined,
  regionIds: readonly string[],
): DirectoryStoreConfig | undefined {
  if (reader === undefined) return undefined;
  const d = DEFAULTS.directoryStore;
  reader.onlyKnown([
    "shared",
    "authority",
    "table",
    "poll_ms",
    "lease_ms",
    "record_new_keys",
    "guard",
    "hold_ms",
    "lock_timeout_ms",
    "batch",
  ]);
  const store: DirectoryStoreConfig = {
    shared: reader.boolean("shared", d.shared),
    authority: reader.choice("authority", ["home", "majority", ...regionIds], d.authority),
    table: reader.string("table", d.table),
    pollMs: reader.integer("poll_ms", d.pollMs, 1, MAX_MS),
    leaseMs: reader.integer("lease_ms", d.leaseMs, 1, MAX_MS),
    recordNewKeys: reader.boolean("record_new_keys", d.recordNewKeys),
    guard: reader.boolean("guard", d.guard),
    holdMs: reader.integer("hold_ms", d.holdMs, 1, MAX_MS),
    lockTimeoutMs: reader.integer("lock_timeout_ms", d.lockTimeoutMs, 1, MAX_MS),
    batch: reader.integer("batch", d.batch, 1, 10_000),
  };
  refuseSharedDirectory(reader, store);
  return store;
}

/**
 * A shared directory agrees in one region (`authority = "home"` or a region id) or in a majority
 * of every region (`"majority"`). The authority and the lease timings are refused without
 * `shared`, which reads nothing else of them. A lease must outlast three polls, so one lost visit
 * does not stop routing.
 */
function refuseSharedDirectory(reader: FieldReader, store: DirectoryStoreConfig): void {
  if (!store.shared) {
    if (store.authority !== DEFAULTS.directoryStore.authority)
      reader.fail(
        "not_available",
        "authority",
        `authority = "${store.authority}" is where the proxies of a shared directory agree, and this one is not shared: set shared = true, or remove the line`,
        [DEFAULTS.directoryStore.authority],
      );
    for (const field of ["poll_ms", "lease_ms"] as const) {
      if (reader.has(field))
        reader.fail(
          "not_available",
          field,
          `${field} times the leases of a shared directory, and this one is not shared: set shared = true, or remove the line`,
        );
    }
    return;
  }
  // The longest sibling table, `<table>_confirms`, must fit PostgreSQL's 63-byte names uncut: cut
  // names of two siblings could be the same table.
  const base = store.table.slice(store.table.indexOf(".") + 1);
  const longest = Buffer.byteLength(`${base}_confirms`);
  if (longest > 63)
    reader.fail(
      "invalid_value",
      "table",
      `a shared directory keeps tables named after table = "${store.table}" with suffixes up to "_confirms", and "${base}_confirms" is ${longest} bytes, over PostgreSQL's 63: choose a table name of at most ${63 - 9} bytes`,
    );
  if (store.leaseMs < 3 * store.pollMs)
    reader.fail(
      "invalid_value",
      reader.has("lease_ms") ? "lease_ms" : "poll_ms",
      `lease_ms (${store.leaseMs}) must be at least 3 times poll_ms (${store.pollMs}), so that one lost heartbeat does not stop routing: raise lease_ms to ${3 * store.pollMs} or more, or lower poll_ms`,
    );
}

function readGather(reader: FieldReader | undefined): GatherConfig {
  const d = DEFAULTS.gather;
  if (reader === undefined) return { ...d };
  reader.onlyKnown(["max_rows", "max_bytes"]);
  return {
    maxRows: reader.integer("max_rows", d.maxRows, 0, Number.MAX_SAFE_INTEGER),
    maxBytes: reader.integer("max_bytes", d.maxBytes, 0, Number.MAX_SAFE_INTEGER),
  };
}

function readTxn(reader: FieldReader | undefined): TxnConfig {
  const d = DEFAULTS.txn;
  if (reader === undefined) return { ...d };
  reader.onlyKnown([
    "decision_log",
    "data_dir",
    "log_path",
    "log_table",
    "recovery_grace_ms",
    "recovery_interval_ms",
    "decide_deadline_ms",
    "step_timeout_ms",
  ]);
  const logPath = reader.string("log_path");
  const txn: TxnConfig = {
    decisionLog: reader.choice("decision_log", DECISION_LOGS, d.decisionLog),
    dataDir: reader.string("data_dir", d.dataDir),
    ...(logPath === undefined ? {} : { logPath }),
    logTable: reader.string("log_table", d.logTable),
    recoveryGraceMs: reader.integer("recovery_grace_ms", d.recoveryGraceMs, 1, MAX_MS),
    recoveryIntervalMs: reader.integer("recovery_interval_ms", d.recoveryIntervalMs, 1, MAX_MS),
    decideDeadlineMs: reader.integer("decide_deadline_ms", d.decideDeadlineMs, 1, MAX_MS),
    stepTimeoutMs: reader.integer("step_timeout_ms", d.stepTimeoutMs, 1, MAX_MS),
  };
  if (!/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/.test(txn.logTable)) {
    reader.fail(
      "invalid_value",
      "log_table",
      "must be a plain lower-case identifier, optionally schema-qualified",
    );
  }
  if (txn.decideDeadlineMs >= txn.recoveryGraceMs) {
    reader.fail(
      "invalid_value",
      "decide_deadline_ms",
      `decide_deadline_ms (${txn.decideDeadlineMs}) must be below recovery_grace_ms (${txn.recoveryGraceMs}), or recovery could roll back a transaction its coordinator is still deciding`,
    );
  }
  return txn;
}
