import { PgError, SqlState } from "@geo/proto";

/**
 * Errors of a directory shared by several proxies, with the SQLSTATE a client can act on: 57P03
 * (cannot route now; retry shortly) when the authority is out of reach, 55P03 when a move cannot
 * get every live peer to hold its keys.
 */

function show(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((key) => JSON.stringify(key));
  return keys.length > 5 ? `${shown.join(", ")} and ${keys.length - 5} more` : shown.join(", ");
}

/** The proxy's lease ran out: it routes geo-partitioned tables no more until the authority answers. */
export function leaseLapsed(
  /** "region eu-west", or "a majority of regions (...)" (Quorum.where). */
  where: string,
  ageMs: number | undefined,
  leaseMs: number,
  cause: unknown,
): PgError {
  const since =
    ageMs === undefined
      ? "has not answered since this proxy started"
      : `last answered ${Math.round(ageMs)} ms ago (lease_ms is ${leaseMs})`;
  const reason = cause instanceof Error ? `: ${cause.message}` : "";
  return new PgError({
    code: SqlState.cannot_connect_now,
    message: `the shared directory's authority, ${where}, ${since}${reason}; statements on geo-partitioned tables are refused so that none is routed on a directory another proxy may have changed`,
    hint: `Retry once ${where} answer${where.startsWith("region ") ? "s" : ""} (SHOW PEERS shows this proxy's lease); statements on other tables carry on.`,
  });
}

/** Live proxies of this directory store agree elsewhere: routing on either would split it. */
export function authoritiesDisagree(where: string, others: readonly string[]): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `this proxy agrees in ${where}, while ${others.join("; ")}; statements on geo-partitioned tables are refused until the proxies agree in one place`,
    hint: 'Set the same [directory_store] authority (a region id, or "majority") in every proxy and restart the ones that differ.',
  });
}

/** A first write's claim, a move's announcement or its confirmations could not reach the authority. */
export function authorityUnreachable(where: string, detail: string): PgError {
  return new PgError({
    code: SqlState.cannot_connect_now,
    message: `the shared directory's authority, ${where}, could not be reached: ${detail}`,
    hint: `Retry once ${where} answer${where.startsWith("region ") ? "s" : ""} (SHOW HEALTH tells); nothing was placed or moved.`,
  });
}

/** Another proxy announced a move of one of these keys first: this move gives way. */
export function keyMovedByPeer(keys: readonly string[], mover: string): PgError {
  return new PgError({
    code: SqlState.lock_not_available,
    message: `key ${show(keys)} is being moved by proxy ${mover}; this move was not made and nothing changed`,
    hint: "Wait for the other move to end (SHOW PEERS lists the moves announced), then retry if the key still needs to move.",
  });
}

/** Live peers did not confirm holding the keys in time: the move was withdrawn. */
export function peersDidNotConfirm(nodes: readonly string[], waitedMs: number): PgError {
  return new PgError({
    code: SqlState.lock_not_available,
    message: `proxies ${nodes.join(", ")} did not confirm holding the keys within ${waitedMs} ms; the move was withdrawn and nothing changed`,
    hint: "A long statement on the key runs through one of them, or it cannot reach the authority: retry, or stop that proxy (after 1.5 x lease_ms without a heartbeat it is not waited for).",
  });
}

/** A COPY's new key was placed in another region by another proxy while the COPY ran. */
export function keyPlacedByPeer(key: string, region: string, wanted: string): PgError {
  return new PgError({
    code: SqlState.serialization_failure,
    message: `key ${JSON.stringify(key)} was placed in region ${region} by another proxy while this COPY sent its rows to ${wanted}; nothing was committed`,
    hint: "Retry the COPY: its rows then go where the key is.",
  });
}
