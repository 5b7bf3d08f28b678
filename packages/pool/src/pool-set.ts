import { Pool, type PoolCloseOptions, type PoolStats } from "./pool.js";
import {
  type ConnectFunction,
  type PoolConfig,
  type PoolCredentials,
  type PoolKey,
  poolName,
} from "./pool-config.js";

/** How a `PoolSet` builds its pools. */
export interface PoolSetOptions {
  /** Sizing and timing shared by every pool (the `[pool]` configuration section). */
  readonly config?: Partial<PoolConfig> | undefined;
  /**
   * Settings of the pools of one key that differ from `config` (a region's own connect timeout):
   * they win over `config` for that key.
   */
  readonly configOf?: ((key: PoolKey) => Partial<PoolConfig> | undefined) | undefined;
  /** Credentials per pool key (password, SCRAM keys, application_name, TLS hook). */
  readonly credentials?: ((key: PoolKey) => PoolCredentials | undefined) | undefined;
  /** Replaces `BackendConnection.connect` (tests). */
  readonly connect?: ConnectFunction | undefined;
  /** Called when a pool created with `warm: true` fails to open its minimum. */
  readonly onWarmError?: ((pool: Pool, error: unknown) => void) | undefined;
}

/**
 * Pools keyed by (endpoint, database, role), created on first use with one shared configuration.
 *
 * @example
 * ```ts
 * const pools = new PoolSet({ config: { max: 20, checkoutTimeoutMs: 2000 }, credentials: () => ({ password }) });
 * await using lease = await pools.get({ host, port, database: "app", user: "alice" }).acquire();
 * ```
 */
export class PoolSet {
  private readonly pools = new Map<string, Pool>();
  private closing = false;

  constructor(private readonly options: PoolSetOptions = {}) {}

  /** The pool for `key`, created on first use (and warmed if the configuration says so). */
  get(key: PoolKey): Pool {
    const name = poolName(key);
    const existing = this.pools.get(name);
    if (existing !== undefined) return existing;
    const pool = new Pool({
      ...this.options.config,
      ...this.options.configOf?.(key),
      ...this.options.credentials?.(key),
      key: { host: key.host, port: key.port, database: key.database, user: key.user },
      connect: this.options.connect,
    });
    if (this.closing) void pool.close();
    this.pools.set(name, pool);
    if (pool.config.warm && !this.closing) {
      pool.warm().catch((error: unknown) => this.options.onWarmError?.(pool, error));
    }
    return pool;
  }

  /** The pool for `key` if it exists. */
  find(key: PoolKey): Pool | undefined {
    return this.pools.get(poolName(key));
  }

  /** Every pool, in creation order. */
  list(): Pool[] {
    return [...this.pools.values()];
  }

  /** One `PoolStats` per pool, in creation order. */
  stats(): PoolStats[] {
    return this.list().map((pool) => pool.stats());
  }

  /**
   * Closes every pool: waiting checkouts fail with 57P01, idle connections close, leased ones
   * close when released or are destroyed after `timeoutMs`.
   */
  async close(options: PoolCloseOptions = {}): Promise<void> {
    this.closing = true;
    await Promise.all(this.list().map((pool) => pool.close(options)));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
