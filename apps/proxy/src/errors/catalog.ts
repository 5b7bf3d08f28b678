import type { Refusal } from "@geo/core";
import { PgError, SqlState, type SqlStateCode } from "@geo/proto";
import { RewriteMismatch, type SqlAnalysisError } from "@geo/sql";

/**
 * Every error the proxy itself originates, as named factories with real SQLSTATEs and hints.
 * Errors from PostgreSQL are relayed as the backend sent them; everything here is the proxy's own
 * word. Refusals of plans that later issues will execute (scatter-gather reads, cross-region
 * writes) live here too, so lifting one is a one-line change in one place.
 */

/** A plan refused by the planner (`@geo/core`'s refusal catalog) as a wire error. */
export function fromRefusal(refusal: Refusal): PgError {
  return new PgError({
    code: refusal.sqlstate as SqlStateCode,
    message: refusal.reason,
    hint: refusal.hint,
  });
}

/** The analyzer could not read the statement (syntax error, unreadable hint). */
export function fromAnalysisError(error: SqlAnalysisError): PgError {
  return new PgError({
    code: error.sqlstate as SqlStateCode,
    message: error.message,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    ...(error.position === undefined ? {} : { position: error.position }),
  });
}

/**
 * A read spanning regions that reached the simple-statement path in extended mode: scatter-gather
 * portals are run by their own Bind/Execute handling, so this is a guard, not a feature limit.
 */
export function refuseScatterRead(regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `the statement reads rows in several regions (${regions.join(", ")}) and cannot be combined on this path`,
    hint: "Send it as a simple query, or constrain the partition key to one value, or add /* geo: key=<value> */ or /* geo: region=<id> */ so the statement runs in one region.",
  });
}

/** The client's own PREPARE TRANSACTION in a block that has work in more than one region. */
export function refuseSecondWriteRegion(written: string, attempted: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `PREPARE TRANSACTION needs the whole transaction in one region; this one has work in regions ${written} and ${attempted}`,
    hint: "Use COMMIT: geoproxy commits work across regions itself. For a client-driven two-phase commit, keep the transaction in one region.",
  });
}

/** An extended-protocol batch outside a transaction wrote in one region and then goes to another. */
export function refuseBatchAcrossRegions(written: string, attempted: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `this batch already wrote in region ${written} outside a transaction; it cannot continue in region ${attempted}`,
    hint: "Wrap the batch in BEGIN ... COMMIT, or send a Sync between the statements of different regions.",
  });
}

/**
 * An SQL-level PREPARE sent with the extended protocol whose statement would not run entirely in
 * the region the session's prepared statements live in: each EXECUTE would read or write that
 * region's rows only. (Sent as a simple query, geoproxy holds it and routes each EXECUTE.)
 */
export function refuseSqlPrepareAcrossRegions(region: string, where: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `PREPARE of a statement that runs in ${where} is not supported through Parse/Bind: its EXECUTE would run in region ${region} alone`,
    hint: "Send the PREPARE as a simple query (geoproxy then routes each EXECUTE by its arguments), or use the driver's prepared statements (protocol Parse/Bind).",
  });
}

/** PREPARE of a name already prepared in this session (PostgreSQL's own error). */
export function duplicatePreparedStatement(name: string): PgError {
  return new PgError({
    code: SqlState.duplicate_prepared_statement,
    message: `prepared statement "${name}" already exists`,
  });
}

/** EXECUTE with another number of arguments than the statement has parameters (PostgreSQL's own error). */
export function sqlExecuteArity(name: string, expected: number, got: number): PgError {
  return new PgError({
    code: SqlState.syntax_error,
    message: `wrong number of parameters for prepared statement "${name}"`,
    detail: `Expected ${expected} parameters but got ${got}.`,
  });
}

/**
 * EXECUTE of a statement geoproxy holds (it spans regions) with an argument it cannot write as a
 * constant of its parameter's type exactly as PostgreSQL would coerce it (an expression, a cast to
 * another type), or a statement that cannot be rewritten at all (position 0).
 */
export function refuseSqlExecuteArgument(name: string, position: number, type: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message:
      position > 0
        ? `EXECUTE ${name}: argument ${position} is not a constant geoproxy can pass as ${type}`
        : `EXECUTE ${name} cannot be rewritten with its arguments for routing`,
    hint: "Pass each argument as a quoted literal ('...'), a number or NULL, or use the driver's prepared statements (protocol Parse/Bind).",
  });
}

/** EXECUTE, sent with Parse/Bind, of a statement geoproxy holds because it spans regions. */
export function refuseHeldExecuteExtended(name: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `EXECUTE ${name} through Parse/Bind is not supported: geoproxy holds that statement because it runs outside the session's region`,
    hint: "Send EXECUTE as a simple query, or use the driver's prepared statements (protocol Parse/Bind) instead of SQL PREPARE.",
  });
}

/** A function the database defines, which may read rows of regions the statement is not sent to. */
export function refuseDatabaseFunction(name: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `function ${name} is defined in the database, and geoproxy cannot see which regions' rows it reads: each region would run it over its own rows only`,
    hint: `If it reads no table, mark it so (ALTER FUNCTION ${name} IMMUTABLE); otherwise run its queries from the application, or name the one region to run it in with /* geo: region=<id> */.`,
  });
}

/** PostgreSQL's own error for a cursor without WITH HOLD declared outside a transaction block. */
export function cursorOutsideBlock(): PgError {
  return new PgError({
    code: SqlState.no_active_sql_transaction,
    message: "DECLARE CURSOR can only be used in transaction blocks",
  });
}

/**
 * An unqualified table name the session's search_path may resolve away from the table planned,
 * left after the catalog lookup (session/qualified-names.ts): a name no schema holds, or DDL's.
 */
export function refuseUnqualifiedTable(name: string, qualified: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `the unqualified table name ${name} cannot be routed under the session's search_path: it may name ${qualified} or another schema's table`,
    hint: `Qualify the name (${qualified}), or search public ahead of other schemas.`,
  });
}

/**
 * COPY FROM into a geo-partitioned table that the proxy cannot split: from a server-side file or
 * program (the rows never pass through the proxy), or with a key hint (it cannot vouch for rows).
 */
export function refuseCopyFrom(): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: "COPY ... FROM through geoproxy is not supported here: the rows would have to be placed by key",
    hint: "Send COPY ... FROM STDIN as a simple query (psql's \\copy does), which geoproxy splits by key; a server-side file or program, or a key= hint, cannot be split.",
  });
}

/** Function calls (the 'F' message) are not routed. */
export function refuseFunctionCall(): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: "the fastpath function call interface is not supported through geoproxy",
    hint: "Call the function in a SELECT statement instead.",
  });
}

/**
 * currval() or lastval() without a server connection of the client's own (transaction pooling):
 * they read what nextval() drew earlier in the server's session, and the server session a
 * statement runs on may have served other clients since, or never this one.
 */
export function refuseSessionSequenceValue(fn: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `${fn}() is not supported in transaction pooling: it reads the sequence values drawn earlier in one server session, and this client's statements do not keep one`,
    hint: 'Take the value where it is drawn (INSERT ... RETURNING, or nextval() itself), or use [pool] mode = "session" for this client.',
  });
}

/** The client names a prepared statement it never prepared (or closed). */
export function unknownStatement(name: string): PgError {
  return new PgError({
    code: SqlState.invalid_sql_statement_name,
    message: `prepared statement "${name}" does not exist`,
  });
}

/** The client names a portal it never bound (or that ended with its transaction). */
export function unknownPortal(name: string): PgError {
  return new PgError({
    code: SqlState.invalid_cursor_name,
    message: `portal "${name}" does not exist`,
  });
}

/** Parse of a name already in use (PostgreSQL allows only the unnamed statement to be replaced). */
export function duplicateStatement(name: string): PgError {
  return new PgError({
    code: SqlState.duplicate_prepared_statement,
    message: `prepared statement "${name}" already exists`,
  });
}

/** Statements after an error in a transaction block, as PostgreSQL says it. */
export function inFailedTransaction(): PgError {
  return new PgError({
    code: SqlState.in_failed_sql_transaction,
    message: "current transaction is aborted, commands ignored until end of transaction block",
  });
}

/** The backend connection serving the client broke mid-statement. */
export function backendLost(region: string, cause?: unknown): PgError {
  const reason = cause instanceof Error ? `: ${cause.message}` : "";
  return new PgError({
    code: SqlState.connection_failure,
    message: `lost the connection to region ${region}${reason}`,
    hint: "The statement's outcome in that region is unknown if it wrote; retry the transaction. This session stays usable.",
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * No connection to a region's primary could be opened (refused, timed out, failed to log in): the
 * statements that need that region fail at once with this, named, instead of the pool's bare
 * address. The proxy keeps serving the other regions and picks this one up when it answers.
 */
export function regionUnreachable(region: string, cause: PgError): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `cannot reach region ${region}: ${cause.message}`,
    hint: `Statements that need region ${region} fail until its primary answers again; statements that need only other regions are served. SHOW HEALTH shows its state.`,
    cause,
  });
}

/** A pinned connection (LISTEN, WITH HOLD cursor, advisory lock, temp table) broke. */
export function pinnedConnectionLost(region: string): PgError {
  return new PgError({
    code: SqlState.connection_failure,
    message: `lost the connection to region ${region} that held this session's LISTEN channels, cursors, advisory locks or temporary tables`,
    hint: "Those session objects are gone; create them again.",
  });
}

/** The proxy is shutting down: new statements are refused, open transactions may finish. */
export function shuttingDown(): PgError {
  return new PgError({
    code: SqlState.admin_shutdown,
    severity: "FATAL",
    message: "terminating connection because geoproxy is shutting down",
    hint: "Reconnect in a moment, to this or another proxy.",
  });
}

/** Too many clients at once (`server.max_connections`). */
export function tooManyClients(max: number): PgError {
  return new PgError({
    code: SqlState.too_many_connections,
    severity: "FATAL",
    message: `sorry, too many clients already (server.max_connections = ${max})`,
    hint: "Raise server.max_connections, or pool connections in the application.",
  });
}

/** A logged-in client announced a message longer than `server.max_message_bytes`. */
export function messageTooLong(limit: number, detail: string): PgError {
  return new PgError({
    code: SqlState.program_limit_exceeded,
    severity: "FATAL",
    message: `message too long: longer than server.max_message_bytes = ${limit}`,
    detail,
    hint: "Send a shorter statement (bind large values as parameters, split COPY data), or raise [server] max_message_bytes.",
  });
}

/** Protocol major version other than 3. */
export function unsupportedProtocol(major: number, minor: number): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    severity: "FATAL",
    message: `unsupported frontend protocol ${major}.${minor}: geoproxy speaks protocol 3.0`,
    hint: "Use a driver that speaks PostgreSQL protocol 3.",
  });
}

/** StartupMessage without a user. */
export function missingUser(): PgError {
  return new PgError({
    code: SqlState.invalid_authorization_specification,
    severity: "FATAL",
    message: "no PostgreSQL user name specified in startup packet",
  });
}

/** A message the protocol does not allow at this point (e.g. CopyData outside COPY). */
export function unexpectedMessage(what: string): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    severity: "FATAL",
    message: `unexpected ${what} message`,
    hint: "The client sent a message out of the protocol's order; check the driver.",
  });
}

/** An internal failure that is the proxy's fault, never the client's. */
export function internalError(cause: unknown): PgError {
  if (cause instanceof RewriteMismatch) return refuseInexactRewrite();
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PgError({
    code: SqlState.internal_error,
    message: `geoproxy internal error: ${reason}`,
    hint: "This is a bug in geoproxy; the statement was not completed. Please report it with the proxy log.",
    cause,
  });
}

/**
 * A statement rewritten for the regions or the home finish whose text would read back as another
 * statement (@geo/sql checks every rewrite): refused rather than run.
 */
export function refuseInexactRewrite(): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message:
      "the statement cannot be rewritten exactly for a read across regions (its rewrite would read back as another statement)",
    hint: "Constrain it to one region with a key condition, or write the expression another way.",
  });
}

/** A partition key bound in binary whose type the proxy cannot read. */
export function unreadableBinaryKey(param: number, typeOid: number): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `cannot route on parameter $${param}: it is bound in binary with type oid ${typeOid}, which geoproxy does not decode`,
    hint: "Bind the key in text format, or declare it as int2, int4, int8, text, varchar or uuid in the Parse.",
  });
}

/** A replication connection (`replication=...` in the StartupMessage) with several regions. */
export function refuseReplication(regions: number): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    severity: "FATAL",
    message: `replication connections are not supported through geoproxy with ${regions} regions: no one server streams the changes of every row`,
    hint: "Connect replication clients to each region's primary directly (geoproxy relays them only when its topology has one region).",
  });
}

/** The client disconnected while its statement waited; never sent, only used to stop the work. */
export function clientGone(): PgError {
  return new PgError({
    code: SqlState.connection_does_not_exist,
    message: "the client disconnected",
  });
}
