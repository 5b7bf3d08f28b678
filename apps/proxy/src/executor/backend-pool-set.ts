import { type Endpoint, type GeoConfig, type NetworkTimeouts, regionTimeouts } from "@geo/core";
import type { ConnectFunction, PoolKey } from "@geo/pool";
import { endpointAddress, PoolSet } from "@geo/pool";

export interface BackendPoolSetOptions {
  /** Whether pools open `min` connections before the first checkout. */
  warm: boolean;
  /** The configured password of the endpoint a pool connects to, if any. */
  passwordOf(key: PoolKey): string | undefined;
  connect?: ConnectFunction | undefined;
}

/**
 * A pool set with the settings of `[pool]`, connecting as `geoproxy` with each endpoint's password;
 * the pools of a region's primary and replicas open their connections within the region's own
 * `connect_timeout_ms` when it sets one.
 */
export function backendPoolSet(config: GeoConfig, options: BackendPoolSetOptions): PoolSet {
  const timeouts = backendTimeouts(config);
  return new PoolSet({
    config: {
      min: config.pool.min,
      max: config.pool.max,
      connectTimeoutMs: config.pool.connectTimeoutMs,
      idleTimeoutMs: config.pool.idleTimeoutMs,
      checkoutTimeoutMs: config.pool.checkoutTimeoutMs,
      maxWaiters: config.pool.maxWaiters,
      warm: options.warm,
    },
    configOf: (key) => {
      const own = timeouts.get(endpointAddress(key));
      return own === undefined ? undefined : { connectTimeoutMs: own.connectTimeoutMs };
    },
    credentials: (key) => {
      const password = options.passwordOf(key);
      return { applicationName: "geoproxy", ...(password === undefined ? {} : { password }) };
    },
    ...(options.connect === undefined ? {} : { connect: options.connect }),
  });
}

/**
 * The pool of an endpoint for a client's role and database: the endpoint's `user`, or the
 * client's own when it names none (with passthrough always the client's own, so every role has
 * pools of its own); the database the client named unless the endpoint fixes one. Without a
 * client database (the proxy's own connections) the endpoint's.
 */
export function backendPoolKey(
  endpoint: Endpoint,
  user: string,
  passthrough: boolean,
  database?: string,
): PoolKey {
  return {
    host: endpoint.host,
    port: endpoint.port,
    database: endpoint.fixedDatabase || database === undefined ? endpoint.database : database,
    user: passthrough ? user : (endpoint.user ?? user),
  };
}

/**
 * The network timeouts of every backend of the topology by `host:port`: its region's own where it
 * sets them, else `[pool]`'s. An address listed in two regions keeps the first one's.
 */
export function backendTimeouts(config: GeoConfig): Map<string, NetworkTimeouts> {
  const byAddress = new Map<string, NetworkTimeouts>();
  for (const region of config.regions) {
    const timeouts = regionTimeouts(config.pool, region);
    for (const endpoint of [region.primary, ...region.replicas]) {
      const address = endpointAddress(endpoint);
      if (!byAddress.has(address)) byAddress.set(address, timeouts);
    }
  }
  return byAddress;
}
