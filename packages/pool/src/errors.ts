import { PgError, SqlState } from "@geo/proto";

/**
 * Every error @geo/pool originates, as named factories. Each is a PgError with a real SQLSTATE,
 * a message naming the backend or pool involved, and a hint saying what to do.
 */

/** The TCP connection to a backend could not be opened (refused, unreachable, DNS). */
export function backendConnectFailed(address: string, cause: unknown): PgError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `could not connect to backend ${address}: ${reason}`,
    hint: "Check that the PostgreSQL server is running and accepts TCP connections on that host and port.",
    cause,
  });
}

/** The backend did not finish the startup handshake within the connect timeout. */
export function backendConnectTimeout(address: string, timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `timed out after ${timeoutMs} ms connecting to backend ${address}`,
    hint: "The server is unreachable, overloaded, or stalled; raise pool.connectTimeoutMs if it is only slow.",
  });
}

/** The backend connection closed or failed while in use or idle. */
export function backendConnectionLost(address: string, cause?: unknown): PgError {
  const reason =
    cause === undefined
      ? "the server closed the connection"
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return new PgError({
    code: SqlState.connection_failure,
    message: `lost connection to backend ${address}: ${reason}`,
    hint: "Retry the transaction; a new backend connection will be opened.",
    cause,
  });
}

/** The backend sent bytes that are not valid protocol 3 messages. */
export function backendProtocolViolation(address: string, detail: string): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    message: `backend ${address} sent an invalid message: ${detail}`,
    hint: "Check that the address points at a PostgreSQL server, not another service.",
  });
}

/** The backend asked for an authentication method this client cannot answer. */
export function backendAuthUnsupported(address: string, user: string, method: string): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `backend ${address} asked role "${user}" for unsupported authentication method ${method}`,
    hint: "Use trust, password, md5 or scram-sha-256 for this role in the backend's pg_hba.conf.",
  });
}

/** The backend asked for a password and none is configured for the role. */
export function backendPasswordMissing(address: string, user: string, method: string): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `backend ${address} requires ${method} authentication for role "${user}" but no password is configured`,
    hint: "Configure the role's backend password, or allow trust for it in the backend's pg_hba.conf.",
  });
}

/**
 * The proxy holds only the role's MD5 hash (MD5 passthrough) and the backend asked for something
 * that hash cannot answer: SCRAM-SHA-256 (the proof needs the password or the ClientKey) or the
 * cleartext password.
 */
export function backendNeedsMoreThanMd5Hash(address: string, user: string, method: string): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `backend ${address} asks role "${user}" for ${method} authentication, which cannot be answered from the role's MD5 hash`,
    hint: "Let that server's pg_hba.conf ask the role for md5, or store the role's password as SCRAM-SHA-256 in every region (its clients then log in with SCRAM), or list the role with its password under [auth] users.",
  });
}

/** The SCRAM exchange with the backend failed on our side (bad server signature, bad nonce...). */
export function backendScramFailed(address: string, user: string, reason: string): PgError {
  return new PgError({
    code: SqlState.invalid_authorization_specification,
    message: `SCRAM authentication of role "${user}" with backend ${address} failed: ${reason}`,
    hint: "Check the role's password; a server signature mismatch means the server does not hold the role's verifier.",
  });
}

/** A checkout was refused at once: the pool's waiter queue is full. */
export function poolQueueFull(pool: string, maxWaiters: number): PgError {
  return new PgError({
    code: SqlState.too_many_connections,
    message: `pool ${pool} is exhausted: ${maxWaiters} clients are already waiting for a connection`,
    hint: "Retry later, shorten transactions, or raise pool.max or pool.maxWaiters.",
  });
}

/** A checkout waited longer than the checkout timeout. */
export function poolCheckoutTimeout(pool: string, timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `timed out after ${timeoutMs} ms waiting for a connection from pool ${pool}`,
    hint: "Every connection of the pool is busy; shorten transactions or raise pool.max or pool.checkoutTimeoutMs.",
  });
}

/** A checkout was made on (or was waiting on) a pool that is closing. */
export function poolClosed(pool: string): PgError {
  return new PgError({
    code: SqlState.admin_shutdown,
    message: `pool ${pool} is shutting down`,
    hint: "The proxy is stopping or the backend was removed from the topology; reconnect.",
  });
}

/** A statement was sent on a connection that is closed or broken. */
export function connectionUnusable(address: string, reason: string): PgError {
  return new PgError({
    code: SqlState.connection_does_not_exist,
    message: `backend connection to ${address} is not usable: ${reason}`,
    hint: "Acquire a new connection from the pool.",
  });
}

/** An internal statement (reset, probe) ran past its timeout; the connection was closed. */
export function internalStatementTimeout(address: string, timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `internal statement on backend ${address} did not finish within ${timeoutMs} ms`,
    hint: "The backend connection was closed; a new one will be opened.",
  });
}

/** An internal statement was asked for while the owner's own reply was still in flight. */
export function replyInFlight(address: string): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `backend connection to ${address} is still answering an earlier statement`,
    hint: "Run internal statements only once the backend sent ReadyForQuery for everything written to it.",
  });
}

/** The owner's frame receiver threw; the connection's state is unknown, so it is closed. */
export function receiverFailed(address: string, cause: unknown): PgError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PgError({
    code: SqlState.internal_error,
    message: `handling a message from backend ${address} failed: ${reason}`,
    hint: "This is a bug in geoproxy; the backend connection was closed.",
    cause,
  });
}
