import type { GeoConfig } from "@geo/core";
import { BackendConnection, type ConnectFunction, type TransportUpgrade } from "@geo/pool";
import type { PassthroughSecrets } from "./passthrough-secrets.js";

/**
 * How the proxy logs in to a backend as a role, decided when each connection opens (so a role's
 * newest keys are used):
 *
 * 1. the endpoint's own `user`: its configured `password`;
 * 2. with `[auth] passthrough`, a role whose client logged in with SCRAM: the ClientKey that login
 *    proved (and the ServerKey, so the backend must prove it holds the same verifier);
 * 3. a role with a `password` in `[auth] users`: that password;
 * 4. with `[auth] passthrough`, a role whose client logged in with MD5: the stored MD5 hash that
 *    login proved, which answers a backend's MD5 request (and nothing else: the pool says so);
 * 5. otherwise no secret at all (trust on the backend, or its refusal is relayed).
 *
 * The endpoint's TLS hook is added to every connection, cancel requests included.
 */
export function backendConnectFor(
  config: GeoConfig,
  proved: PassthroughSecrets | null,
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
    const secret = proved?.get(options.user);
    if (secret?.kind === "scram")
      return base({ ...withTls, password: undefined, scramKeys: secret.keys, md5Hash: undefined });
    // A configured password answers every method, so it goes first; the hash answers only MD5.
    return base({
      ...withTls,
      password: passwords.get(options.user),
      scramKeys: undefined,
      md5Hash: secret?.kind === "md5" ? secret.hash : undefined,
    });
  };
}
