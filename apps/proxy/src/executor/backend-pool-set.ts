import type { Endpoint, GeoConfig } from "@geo/core";
import type { ConnectFunction, PoolKey } from "@geo/pool";
import { PoolSet } from "@geo/pool";

export interface BackendPoolSetOptions {
  /** Whether pools open `min` connections before the first checkout. */
  warm: boolean;
  /** The configured password of the endpoint a pool connects to, if any. */
  passwordOf(key: PoolKey): string | undefined;
  connect?: ConnectFunction | undefined;
}

/** A pool set with the settings of `[pool]`, connecting as `geoproxy` with each endpoint's password. */
export function backendPoolSet(config: GeoConfig, options: BackendPoolSetOptions): PoolSet {
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
