import type { GeoConfig } from "@geo/core";
import { BackendConnection, type ConnectFunction, type TransportUpgrade } from "@geo/pool";
import type { PassthroughKeys } from "./passthrough-keys.js";

/**
 * How the proxy logs in to a backend as a role, decided when each connection opens (so a role's
 * newest keys are used):
 *
 * 1. the endpoint's own `user`: its configured `password`;
 * 2. with `[auth] passthrough`, a role whose client logged in with SCRAM: the ClientKey that login
 *    proved (and the ServerKey, so the backend must prove it holds the same verifier);
 * 3. a role with a `password` in `[auth] users`: that password;
 * 4. otherwise no secret at all (trust on the backend, or its refusal is relayed).
 *
 * The endpoint's TLS hook is added to every connection, cancel requests included.
 */
export function backendConnectFor(
  config: GeoConfig,
  keys: PassthroughKeys | null,
  upgrades: ReadonlyMap<string, TransportUpgrade | undefined>,
  base: ConnectFunction = (options) => BackendConnection.connect(options),
): ConnectFunction {
  const endpoints = new Map(
    config.regions
      .flatMap((region) => [region.primary, ...region.replicas])
      .map((e) => [`${e.host}:${e.port}`, e]),
  );
  const passwords = new Map(
    config.auth.users.flatMap((user) =>
      user.password === undefined ? [] : [[user.name, user.password] as const],
    ),
  );
  return (options) => {
    const address = `${options.host}:${options.port}`;
    const endpoint = endpoints.get(address);
    const upgrade = options.upgrade ?? upgrades.get(address);
    const withTls = upgrade === undefined ? options : { ...options, upgrade };
    if (endpoint?.user !== undefined && endpoint.user === options.user) return base(withTls);
    const proved = keys?.get(options.user);
    if (proved !== undefined) return base({ ...withTls, password: undefined, scramKeys: proved });
    return base({ ...withTls, password: passwords.get(options.user), scramKeys: undefined });
  };
}
