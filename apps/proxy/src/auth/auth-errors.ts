import { PgError, SqlState } from "@geo/proto";

/**
 * The errors of logging in to the proxy, each FATAL: the connection closes after it. A wrong
 * password, an unknown role, a role without a usable verifier and a malformed proof all end in
 * `passwordFailed`, so a login attempt cannot tell which roles exist.
 */

/**
 * Every failed password login, whatever the cause (the proxy's log says which). The hint names the
 * causes an operator can fix, the same for every role so it reveals nothing about one: a role with
 * no stored password leaves nothing to check the client against, and fails like a wrong password.
 */
export function passwordFailed(user: string): PgError {
  return new PgError({
    code: SqlState.invalid_password,
    severity: "FATAL",
    message: `password authentication failed for user "${user}"`,
    hint: "Check the role name and the password. A role with no password stored (or only an MD5 hash under scram-sha-256) leaves the proxy no secret to check the client against: give the role a password, or list it under [auth] users (with a password, or by name alone with passthrough, where its servers trust it).",
  });
}

/**
 * A role listed in `[auth] users` by name alone under passthrough logs in without a password when
 * the home region's server lets it in without one (a trust entry for the proxy's address); this
 * server asked for a password, or refused the role. Only roles the configuration lists this way
 * get it, so it says nothing about others.
 */
export function passwordlessRefusedByHome(user: string, region: string, cause: PgError): PgError {
  return new PgError({
    code: SqlState.invalid_authorization_specification,
    severity: "FATAL",
    message: `role "${user}" logs in without a password, but region ${region}'s server did not let it in without one: ${cause.message}`,
    hint: "Give the role a trust entry for the proxy's address in every region's pg_hba.conf, or give it a password and remove it from [auth] users.",
  });
}

/** `[tls] require_client_tls`: a StartupMessage arrived in clear. */
export function tlsRequired(): PgError {
  return new PgError({
    code: SqlState.invalid_authorization_specification,
    severity: "FATAL",
    message: "this proxy accepts only connections encrypted with TLS",
    hint: "Connect with sslmode=require (or verify-ca / verify-full).",
  });
}

/** Bytes arrived after an SSLRequest, before the TLS handshake (CVE-2021-23214). */
export function unencryptedAfterSslRequest(): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    severity: "FATAL",
    message: "received unencrypted data after SSL request",
    hint: "A client must wait for the answer to SSLRequest before sending anything else; this may be a man-in-the-middle attempt.",
  });
}

/** A second SSLRequest, or one inside TLS already. */
export function sslRequestRepeated(): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    severity: "FATAL",
    message: "SSLRequest received on a connection that already negotiated encryption",
    hint: "Send SSLRequest once, before the StartupMessage.",
  });
}

/** `[auth] timeout_ms` passed before the login finished (PostgreSQL's authentication_timeout). */
export function authenticationTimeout(): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    severity: "FATAL",
    message: "canceling authentication due to timeout",
    hint: "The client took longer than [auth] timeout_ms to log in.",
  });
}

/** `[auth] startup_timeout_ms` passed before the StartupMessage arrived. */
export function startupTimeout(): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    severity: "FATAL",
    message: "canceling authentication: no startup packet in time",
    hint: "The client took longer than [auth] startup_timeout_ms to send its startup packet.",
  });
}

/** `[auth] max_unauthenticated_per_address` connections of this address are already logging in. */
export function tooManyLoggingInFrom(address: string, max: number): PgError {
  return new PgError({
    code: SqlState.too_many_connections,
    severity: "FATAL",
    message: `too many connections from ${address} are logging in (at most ${max})`,
    hint: "Retry shortly; raise [auth] max_unauthenticated_per_address if legitimate clients behind one address hit this.",
  });
}

/** A connection that had sent nothing was closed to make room for a newer one. */
export function evictedSilent(): PgError {
  return new PgError({
    code: SqlState.too_many_connections,
    severity: "FATAL",
    message: "closing a connection that sent nothing: too many connections are logging in",
    hint: "Send the startup packet as soon as the connection opens.",
  });
}

/** `[auth] max_unauthenticated` connections are already logging in. */
export function tooManyLoggingIn(max: number): PgError {
  return new PgError({
    code: SqlState.too_many_connections,
    severity: "FATAL",
    message: `too many connections are logging in (at most ${max})`,
    hint: "Retry shortly; raise [auth] max_unauthenticated if legitimate clients hit this.",
  });
}

/** The home region could not be asked for a role's verifier. */
export function verifierLookupFailed(cause?: unknown): PgError {
  // A deadline that passed is worth telling the client: it names the region and the setting.
  const why = cause instanceof PgError && cause.code === SqlState.query_canceled ? `: ${cause.message}` : "";
  return new PgError({
    code: SqlState.cannot_connect_now,
    severity: "FATAL",
    message: `authentication is unavailable: the home region could not be asked for the role's verifier${why}`,
    hint: "Retry; check that the home region is reachable and that [auth] verifier_query runs as its endpoint user.",
  });
}

/**
 * A backend left one of the proxy's login lookups (the verifier lookup, the check of the client's
 * startup settings) unanswered for `[pool] lookup_timeout_ms`; the connection was discarded.
 */
export function loginLookupTimedOut(region: string, lookup: string, timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `region ${region} did not answer ${lookup} within ${timeoutMs} ms ([pool] lookup_timeout_ms)`,
    hint: "Check that the region's server is running and reachable; raise [pool] lookup_timeout_ms if it is only slow.",
  });
}

/** A SASL exchange that does not follow SCRAM-SHA-256, or an answer of the wrong kind. */
export function authProtocolViolation(detail: string): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    severity: "FATAL",
    message: `invalid authentication message: ${detail}`,
    hint: "The client must answer with the mechanism and messages the server asked for.",
  });
}
