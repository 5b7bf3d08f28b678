import { PgError, SqlState } from "@geo/proto";

/**
 * The proxy's own errors about replicas, as named factories. The monitor's own (unknown backend,
 * draining a primary, a region whose primary is down) come from `@geo/pool`.
 */

/** DRAIN / UNDRAIN by a client that may not change what serves reads. */
export function drainNotAllowed(command: string, user: string, trust: boolean): PgError {
  return new PgError({
    code: SqlState.insufficient_privilege,
    message: trust
      ? `${command} is only accepted from a client on this machine while [auth] method = "trust"`
      : `${command} needs an operator; role "${user}" is not one`,
    hint: trust
      ? "Connect over 127.0.0.1 (or ::1), or choose scram-sha-256 or md5 and list the role in [auth] operators."
      : "List the role in [auth] operators and log in again.",
  });
}

/** DRAIN / UNDRAIN on a proxy whose topology lists no replica. */
export function noReplicasConfigured(command: string): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `${command} has nothing to act on: the topology lists no replicas`,
    hint: "Add replicas = [{ host = ..., port = ... }] to a region in [[topology.regions]] and restart.",
  });
}

/** DRAIN / UNDRAIN without a `host:port`. */
export function drainNeedsAddress(command: string): PgError {
  return new PgError({
    code: SqlState.syntax_error,
    message: `${command} needs a backend; the command is written ${command} <host:port>`,
    hint: `For example: ${command} 10.0.0.6:5432 (SHOW HEALTH lists every backend's endpoint).`,
  });
}
