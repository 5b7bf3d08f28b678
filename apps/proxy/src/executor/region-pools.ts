import { type GeoConfig, regionTimeouts, type Topology } from "@geo/core";
import {
  BackendConnection,
  type ConnectFunction,
  type Lease,
  type Pool,
  type PoolKey,
  type PoolSet,
} from "@geo/pool";
import { PgError, SqlState } from "@geo/proto";
import type { RegionPoolStats } from "../console/context.js";
import { regionUnreachable } from "../errors/catalog.js";
import { backendPoolKey, backendPoolSet } from "./backend-pool-set.js";

/**
 * The backend pools of every region's primary, keyed by (endpoint, database, role). The role is
 * the endpoint's `user`, or the client's own when the endpoint names none.
 */
export class RegionPools {
  private readonly pools: PoolSet;
  private readonly passwords = new Map<string, string>();
  /** With passthrough every client's role has pools of its own, whatever the endpoint's `user`. */
  private readonly passthrough: boolean;
  /** Pools by region, then by client role and database: found per statement without building their key. */
  private readonly byRegion = new Map<string, Map<string, Pool>>();
  private readonly connect: ConnectFunction;
  /** Each region's connect timeout: its own `connect_timeout_ms`, else `[pool]`'s. */
  private readonly connectTimeoutMs = new Map<string, number>();
  private readonly defaultConnectTimeoutMs: number;

  constructor(
    private readonly topology: Topology,
    config: GeoConfig,
    connect?: ConnectFunction,
  ) {
    this.connect = connect ?? ((options) => BackendConnection.connect(options));
    this.defaultConnectTimeoutMs = config.pool.connectTimeoutMs;
    for (const region of config.regions)
      this.connectTimeoutMs.set(region.id, regionTimeouts(config.pool, region).connectTimeoutMs);
    this.passthrough = config.auth.passthrough;
    for (const region of topology.regions) {
      const password = region.primary.password;
      if (password !== undefined)
        this.passwords.set(`${region.primary.host}:${region.primary.port}`, password);
    }
    this.pools = backendPoolSet(config, {
      warm: config.pool.warm,
      passwordOf: (key) => this.passwords.get(`${key.host}:${key.port}`),
      connect,
    });
  }

  keyOf(region: string, user: string, database?: string): PoolKey {
    return backendPoolKey(this.topology.region(region)!.primary, user, this.passthrough, database);
  }

  /**
   * A connection to the region's primary at the pool's own settings, for a client's role and
   * database (absent: the proxy's own, in the endpoint's database), for statements the proxy
   * runs itself: waits at most the checkout timeout, then fails (53300/57014). A connection that
   * cannot be opened fails at once with 08001 naming the region.
   */
  acquire(region: string, user: string, database?: string): Promise<Lease> {
    return this.poolOf(region, user, database)
      .acquireAtDefaults()
      .catch((error: unknown) => {
        throw namingRegion(region, error);
      });
  }

  /**
   * As `acquire`, but the connection may still carry the settings of the client that used it
   * last: for a session's statements, which replay the session's own settings on it first.
   */
  acquireForSession(region: string, user: string, database?: string): Promise<Lease> {
    return this.poolOf(region, user, database)
      .acquire()
      .catch((error: unknown) => {
        throw namingRegion(region, error);
      });
  }

  /**
   * A connection of its own to the region's primary, outside every pool, as the proxy's own role in
   * the endpoint's database: for a session that must outlive any checkout, such as the node claim,
   * whose session-level locks a pool's reset would release. The caller closes it.
   */
  async connectClaim(region: string, applicationName: string): Promise<BackendConnection> {
    const endpoint = this.topology.region(region)!.primary;
    const key = this.keyOf(region, endpoint.user ?? "postgres");
    const password = this.passwords.get(`${key.host}:${key.port}`);
    try {
      return await this.connect({
        ...key,
        connectTimeoutMs: this.connectTimeoutOf(region),
        applicationName,
        ...(password === undefined ? {} : { password }),
      });
    } catch (error) {
      throw namingRegion(region, error);
    }
  }

  /**
   * An idle connection to the region's primary at once, or null when `acquireForSession` must
   * wait for one. It may carry another client's settings, as with `acquireForSession`.
   */
  tryAcquire(region: string, user: string, database?: string): Lease | null {
    return this.poolOf(region, user, database).tryAcquire();
  }

  /** As `tryAcquire`, but only a connection `accept` takes; otherwise null and the pool is as it was. */
  tryAcquireIf(
    region: string,
    user: string,
    database: string,
    accept: (connection: BackendConnection) => boolean,
  ): Lease | null {
    return this.poolOf(region, user, database).tryAcquireIf(accept);
  }

  /**
   * A connection of the caller's own to the region's primary, outside every pool, as the pool of
   * this role and database would log in but with `startupParams` (a replication connection's,
   * `application_name` included): the caller closes it. Fails with the backend's own error.
   */
  async connectOwn(
    region: string,
    user: string,
    database: string,
    startupParams: Readonly<Record<string, string>>,
  ): Promise<BackendConnection> {
    const key = this.keyOf(region, user, database);
    const password = this.passwords.get(`${key.host}:${key.port}`);
    try {
      return await this.connect({
        ...key,
        ...(password === undefined ? {} : { password }),
        connectTimeoutMs: this.connectTimeoutOf(region),
        startupParams,
      });
    } catch (error) {
      throw namingRegion(region, error);
    }
  }

  /** How long a connection of `region` may take to open (`connect_timeout_ms`, its own or `[pool]`'s). */
  connectTimeoutOf(region: string): number {
    return this.connectTimeoutMs.get(region) ?? this.defaultConnectTimeoutMs;
  }

  private poolOf(region: string, user: string, database: string | undefined): Pool {
    let byClient = this.byRegion.get(region);
    if (byClient === undefined) {
      byClient = new Map();
      this.byRegion.set(region, byClient);
    }
    // Role and database names cannot hold NUL: the pair is one key.
    const client = database === undefined ? user : `${user}\u0000${database}`;
    let pool = byClient.get(client);
    if (pool === undefined) {
      pool = this.pools.get(this.keyOf(region, user, database));
      byClient.set(client, pool);
    }
    return pool;
  }

  stats(): RegionPoolStats[] {
    const out: RegionPoolStats[] = [];
    for (const pool of this.pools.list()) {
      const stats = pool.stats();
      const region = this.topology.regions.find(
        (r) => r.primary.host === stats.key.host && r.primary.port === stats.key.port,
      );
      out.push({ ...stats, region: region?.id ?? "?", role: "primary" });
    }
    return out;
  }

  close(timeoutMs: number): Promise<void> {
    return this.pools.close({ timeoutMs });
  }
}

/**
 * The pool names only the address it could not connect to; a client needs the region. Errors that
 * name it already (the unreachable guard's) and every other error pass unchanged.
 */
function namingRegion(region: string, error: unknown): unknown {
  if (!(error instanceof PgError)) return error;
  if (error.code !== SqlState.sqlclient_unable_to_establish_sqlconnection) return error;
  if (error.message.includes(region)) return error;
  return regionUnreachable(region, error);
}
