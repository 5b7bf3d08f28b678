import type {
  BackendConnection,
  ConnectOptions,
  ScramKeyCredentials,
  TransportUpgrade,
} from "./backend-connection.js";

/** What a pool serves: one backend endpoint, one database, one role. */
export interface PoolKey {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

/** `host:port/database as user`: the name used in errors, logs and SHOW POOLS. */
export function poolName(key: PoolKey): string {
  return `${key.host}:${key.port}/${key.database} as ${key.user}`;
}

/** Sizing and timing of a pool. Field names match the `[pool]` section of the configuration. */
export interface PoolConfig {
  /** Connections kept open even when idle (and opened by `warm()`). Default 0. */
  readonly min: number;
  /** Connections open at most, busy, idle, resetting and connecting together. Default 20. */
  readonly max: number;
  /** Limit for TCP connect + authentication + first ReadyForQuery. Default 5000 ms. */
  readonly connectTimeoutMs: number;
  /** An idle connection beyond `min` is closed after this long. Default 300000 ms. */
  readonly idleTimeoutMs: number;
  /** A checkout waits at most this long, then fails with 57014. Default 5000 ms. */
  readonly checkoutTimeoutMs: number;
  /** Checkouts allowed to wait; one more fails at once with 53300. Default 1000. */
  readonly maxWaiters: number;
  /** Open `min` connections when the pool is created (PoolSet). Default false. */
  readonly warm: boolean;
  /** Connections older than this are closed when they come back or sit idle. 0: never. Default 0. */
  readonly maxLifetimeMs?: number | undefined;
  /** Limit for the reset statements run between clients. Default 5000 ms. */
  readonly resetTimeoutMs?: number | undefined;
}

/** A `PoolConfig` with every field set. */
export type ResolvedPoolConfig = { readonly [K in keyof PoolConfig]-?: Exclude<PoolConfig[K], undefined> };

/** The defaults of every `PoolConfig` field. */
export const DEFAULT_POOL_CONFIG: ResolvedPoolConfig = {
  min: 0,
  max: 20,
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 300_000,
  checkoutTimeoutMs: 5_000,
  maxWaiters: 1_000,
  warm: false,
  maxLifetimeMs: 0,
  resetTimeoutMs: 5_000,
};

/** How a pool logs in to its backend. */
export interface PoolCredentials {
  readonly password?: string | undefined;
  /** SCRAM passthrough: the ClientKey (and ServerKey) of the role, instead of the password. */
  readonly scramKeys?: ScramKeyCredentials | undefined;
  /** MD5 passthrough: the role's stored MD5 hash, instead of the password. */
  readonly md5Hash?: string | undefined;
  readonly applicationName?: string | undefined;
  readonly startupParams?: Readonly<Record<string, string>> | undefined;
  /** TLS negotiation hook; see `TransportUpgrade`. */
  readonly upgrade?: TransportUpgrade | undefined;
}

/** Opens one backend connection; `BackendConnection.connect` unless replaced (tests, TLS). */
export type ConnectFunction = (options: ConnectOptions) => Promise<BackendConnection>;

/** Everything a `Pool` is built from. */
export interface PoolOptions extends Partial<PoolConfig>, PoolCredentials {
  readonly key: PoolKey;
  readonly connect?: ConnectFunction | undefined;
}
