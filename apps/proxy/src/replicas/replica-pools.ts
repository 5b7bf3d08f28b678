import type { Endpoint, GeoConfig, Topology } from "@geo/core";
import { type ConnectFunction, endpointAddress, type Lease, type PoolKey, type PoolSet } from "@geo/pool";
import { backendPoolKey, backendPoolSet } from "../executor/backend-pool-set.js";
import type { RegionPoolStats } from "../observability/region-pool-stats.js";

/**
 * The pools of every replica endpoint, keyed like the primaries' (endpoint, database, role), with
 * the pool settings of `[pool]`. Kept apart from `RegionPools` so a replica's connections never
 * stand in for a primary's.
 */
export class ReplicaPools {
  private readonly pools: PoolSet;
  private readonly endpoints = new Map<string, { readonly region: string; readonly endpoint: Endpoint }>();
  private readonly passthrough: boolean;

  constructor(topology: Topology, config: GeoConfig, connect?: ConnectFunction) {
    this.passthrough = config.auth.passthrough;
    for (const region of topology.regions)
      for (const endpoint of region.replicas)
        this.endpoints.set(endpointAddress(endpoint), { region: region.id, endpoint });
    this.pools = backendPoolSet(config, {
      warm: false,
      passwordOf: (key) => this.endpoints.get(endpointAddress(key))?.endpoint.password,
      connect,
    });
  }

  /** True when the topology lists at least one replica. */
  get any(): boolean {
    return this.endpoints.size > 0;
  }

  /** Whether `region` has replicas at all: without them no read asks the monitor. */
  regionHasReplicas(region: string): boolean {
    for (const entry of this.endpoints.values()) if (entry.region === region) return true;
    return false;
  }

  private keyOf(address: string, user: string, database: string): PoolKey | undefined {
    const entry = this.endpoints.get(address);
    if (entry === undefined) return undefined;
    return backendPoolKey(entry.endpoint, user, this.passthrough, database);
  }

  /** A connection to the replica at `address` (`host:port`), as the client's role and database map there. */
  acquire(address: string, user: string, database: string): Promise<Lease> {
    const key = this.keyOf(address, user, database);
    if (key === undefined) return Promise.reject(new Error(`no replica ${address} is configured`));
    return this.pools.get(key).acquire();
  }

  stats(): RegionPoolStats[] {
    return this.pools.list().map((pool) => {
      const stats = pool.stats();
      const region = this.endpoints.get(endpointAddress(stats.key))?.region ?? "?";
      return { ...stats, region, role: "replica" };
    });
  }

  close(timeoutMs: number): Promise<void> {
    return this.pools.close({ timeoutMs });
  }
}
