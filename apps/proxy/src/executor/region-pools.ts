import type { GeoConfig, Topology } from "@geo/core";
import type { ConnectFunction, Lease, Pool, PoolKey, PoolSet } from "@geo/pool";
import type { RegionPoolStats } from "../console/context.js";
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
  /** Pools by region, then by client role: found per statement without building their key. */
  private readonly byRegion = new Map<string, Map<string, Pool>>();

  constructor(
    private readonly topology: Topology,
    config: GeoConfig,
    connect?: ConnectFunction,
  ) {
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

  keyOf(region: string, user: string): PoolKey {
    return backendPoolKey(this.topology.region(region)!.primary, user, this.passthrough);
  }

  /** A connection to the region's primary: waits at most the checkout timeout, then fails (53300/57014). */
  acquire(region: string, user: string): Promise<Lease> {
    return this.poolOf(region, user).acquire();
  }

  /** An idle connection to the region's primary at once, or null when `acquire` must wait for one. */
  tryAcquire(region: string, user: string): Lease | null {
    return this.poolOf(region, user).tryAcquire();
  }

  private poolOf(region: string, user: string): Pool {
    let byUser = this.byRegion.get(region);
    if (byUser === undefined) {
      byUser = new Map();
      this.byRegion.set(region, byUser);
    }
    let pool = byUser.get(user);
    if (pool === undefined) {
      pool = this.pools.get(this.keyOf(region, user));
      byUser.set(user, pool);
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
