import { PgError, SqlState } from "@geo/proto";

/**
 * Every error the health monitor originates, as named factories: a PgError with a real SQLSTATE,
 * a message naming the backend or region, and a hint saying what to do.
 */

/** DRAIN / UNDRAIN / status named an address the topology does not hold. */
export function unknownBackend(address: string): PgError {
  return new PgError({
    code: SqlState.undefined_object,
    message: `no backend ${address} is configured`,
    hint: "Name a backend as host:port exactly as SHOW HEALTH lists it.",
  });
}

/** A region the topology does not hold, or one without a primary. */
export function unknownRegion(region: string): PgError {
  return new PgError({
    code: SqlState.undefined_object,
    message: `region "${region}" has no primary configured`,
    hint: "Check the region id against [[topology.regions]]; every region needs a primary.",
  });
}

/** DRAIN was asked of a primary. */
export function drainNeedsReplica(address: string, region: string): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `backend ${address} is the primary of region "${region}"; only replicas can be drained`,
    hint: "Drain one of the region's replicas. geoproxy observes primaries and never takes one out of service.",
  });
}

/** Two backends of the topology share a host and port. */
export function duplicateBackend(address: string): PgError {
  return new PgError({
    code: SqlState.duplicate_object,
    message: `backend ${address} is listed more than once`,
    hint: "Each host:port may appear once in the topology, with one region and one role.",
  });
}

/** A region lists two primaries. */
export function duplicatePrimary(region: string, first: string, second: string): PgError {
  return new PgError({
    code: SqlState.duplicate_object,
    message: `region "${region}" has two primaries: ${first} and ${second}`,
    hint: "Give each region exactly one primary and list the other servers as replicas.",
  });
}

/** The probe's answer did not have the expected shape. */
export function probeAnswerUnexpected(address: string, detail: string): PgError {
  return new PgError({
    code: SqlState.internal_error,
    message: `health probe of backend ${address} got an unexpected answer: ${detail}`,
    hint: "Check that the address points at a PostgreSQL server of version 10 or later.",
  });
}

/** The probe did not finish within the probe timeout. */
export function probeTimedOut(address: string, timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `health probe of backend ${address} did not answer within ${timeoutMs} ms`,
    hint: "The server is unreachable, stalled or overloaded; raise the probe timeout if it is only slow.",
  });
}

/** The previous probe of a backend was still running when the next one was due. */
export function probeStillRunning(address: string): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `the previous health probe of backend ${address} has not finished`,
    hint: "The server is stalled or the prober ignores its timeout; it counts as a failed probe.",
  });
}

/** A text that is not a pg_lsn. */
export function invalidLsn(text: string): PgError {
  return new PgError({
    code: SqlState.invalid_text_representation,
    message: `invalid WAL position "${text}"`,
    hint: "A WAL position is two hex numbers of up to 8 digits separated by a slash, as in 16/B374D848.",
  });
}

/**
 * For the data path: a read cannot run in a region because its primary is down. Replicas serve
 * reads only while their primary answers probes, so a stale copy never passes for the current one.
 */
export function regionPrimaryDown(region: string, address: string, reason: string | undefined): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `the primary ${address} of region "${region}" is down${reason === undefined ? "" : `: ${reason}`}`,
    detail: "Replicas of a region serve reads only while its primary answers, so their lag is known.",
    hint: "Retry once the primary is back (SHOW HEALTH); geoproxy never promotes a replica.",
  });
}

/** The monitor stopped while a probe was connecting. */
export function probeAbandoned(address: string): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `health probe of backend ${address} was abandoned: the monitor stopped`,
    hint: "Nothing to do; a stopped monitor probes no more.",
  });
}

/**
 * A backend that answered no liveness probe for `[pool] unreachable_timeout_ms`: the connections
 * waiting on it are broken with this. `backend` names its region, role and address.
 */
export function backendStoppedAnswering(backend: string, reason: string): PgError {
  return new PgError({
    code: SqlState.connection_failure,
    message: `${backend} stopped answering: ${reason}`,
    hint: "The statement's outcome there is unknown if it wrote; retry once the region answers again (SHOW HEALTH shows its state). [pool] unreachable_timeout_ms bounds this wait.",
  });
}

/** A new connection to a backend declared unreachable `sinceMs` ago fails with this at once. */
export function backendUnreachable(backend: string, reason: string, sinceMs: number): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `${backend} is unreachable: ${reason}, ${sinceMs} ms ago`,
    hint: "Statements that need this region fail at once until it answers a probe again; retry later, or run what does not need it. SHOW HEALTH shows its state.",
  });
}
