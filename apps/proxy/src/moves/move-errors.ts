import { PgError, SqlState } from "@geo/proto";

/**
 * Errors of the directory store and of moves, as named factories with real SQLSTATEs and hints
 * that name the fix. A statement held back by a move gets 40001, which clients retry.
 */

function show(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((key) => JSON.stringify(key));
  return keys.length > 5 ? `${shown.join(", ")} and ${keys.length - 5} more` : shown.join(", ");
}

/** A statement waited longer than hold_ms for a move of its key. */
export function heldTooLong(keys: readonly string[], holdMs: number): PgError {
  return new PgError({
    code: SqlState.serialization_failure,
    message: `key ${show(keys)} is being moved and the statement waited ${holdMs} ms for it`,
    hint: "Retry the transaction: once the move ends the statement goes where the key is. Raise [directory_store] hold_ms to wait longer.",
  });
}

/** A statement for a moving key inside a transaction that already did work: waiting could deadlock with the move. */
export function heldInTransaction(keys: readonly string[]): PgError {
  return new PgError({
    code: SqlState.serialization_failure,
    message: `key ${show(keys)} is being moved, and this transaction has already done work`,
    hint: "Roll back and retry the transaction: it cannot wait for the move while holding what the move needs.",
  });
}

/** A key with rows in more than one region: which copy is right cannot be told. */
export function keyInSeveralRegions(key: string, regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `key ${JSON.stringify(key)} has rows in ${regions.length} regions (${regions.join(", ")}); geoproxy refuses to guess which are right`,
    hint: `Keep the rows of one region and delete the others (connect to each region directly), then read again; RELOCATE ${key} TO '<region>' moves what is left.`,
  });
}

/** RELOCATE or REBALANCE by a role that is not an operator. */
export function notAnOperator(command: string, user: string, trust: boolean): PgError {
  return new PgError({
    code: SqlState.insufficient_privilege,
    message: `${command} needs an operator; role "${user}" is not one`,
    hint: trust
      ? 'Under [auth] method = "trust" nobody is an operator: choose scram-sha-256 or md5 and list the role in [auth] operators.'
      : `List the role in [auth] operators and log in again.`,
  });
}

/** A move asked of a proxy with no [directory_store]. */
export function noDirectoryStore(command: string): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `${command} needs the directory in PostgreSQL, and this geoproxy has no [directory_store]`,
    hint: "Add a [directory_store] section to the configuration and restart: moves change the directory in every region.",
  });
}

export function unknownRegion(region: string, regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.invalid_parameter_value,
    message: `unknown region ${JSON.stringify(region)}`,
    hint: `The regions are: ${regions.join(", ")}.`,
  });
}

/** The move cannot run inside the client's transaction block: it commits on its own, in two phases. */
export function moveInTransaction(command: string): PgError {
  return new PgError({
    code: SqlState.active_sql_transaction,
    message: `${command} cannot run inside a transaction block`,
    hint: "COMMIT or ROLLBACK first: a move commits on its own, in every region at once.",
  });
}

/** A table outside the move references one inside it: deleting the key's rows would break it. */
export function outsideForeignKey(child: string, parent: string, region: string): PgError {
  return new PgError({
    code: SqlState.dependent_objects_still_exist,
    message: `table ${child} has a foreign key onto ${parent} in region ${region}, and ${child} is not geo-partitioned: its rows cannot move with the key`,
    hint: `Make ${child} geo-partitioned on the same key (a [[tables]] entry), or drop its foreign key, then retry the move.`,
  });
}

/** A count of the move did not match the one before it: the move was abandoned. */
export function countMismatch(table: string, step: string, expected: number, got: number): PgError {
  return new PgError({
    code: SqlState.data_corrupted,
    message: `the move of table ${table} ${step} ${got} rows where ${expected} were read; the move was abandoned and nothing changed`,
    hint: "A writer outside geoproxy may be changing the key's rows: stop it and retry the move.",
  });
}

/** Locks or in-flight statements did not clear within lock_timeout_ms. */
export function moveLockTimeout(detail: string, lockTimeoutMs: number): PgError {
  return new PgError({
    code: SqlState.lock_not_available,
    message: `the move could not take its locks within ${lockTimeoutMs} ms (${detail}); it was abandoned and nothing changed`,
    hint: "A long transaction holds the key's tables: let it finish and retry, or raise [directory_store] lock_timeout_ms.",
  });
}

/** Another RELOCATE or REBALANCE through this proxy is moving one of the keys now. */
export function keyAlreadyMoving(key: string): PgError {
  return new PgError({
    code: SqlState.lock_not_available,
    message: `key ${JSON.stringify(key)} is being moved by another move through this proxy; this move was not made and nothing changed`,
    hint: "Wait for the other move to end (the admin port lists moves running), then retry if the key still needs to move.",
  });
}

/** Looking for a key with no entry failed in some region: where its rows are is unknown. */
export function lookupFailed(key: string, cause: unknown): PgError {
  return new PgError({
    code: SqlState.connection_failure,
    message: `could not look for key ${JSON.stringify(key)} in every region: ${cause instanceof Error ? cause.message : String(cause)}`,
    hint: "A region did not answer; retry once it is back (SHOW HEALTH tells).",
  });
}

/** A geo-partitioned table the destination region does not have: its rows would have nowhere to go. */
export function tableMissingInDestination(table: string): PgError {
  return new PgError({
    code: SqlState.undefined_table,
    message: `table ${table} does not exist in the destination region`,
    hint: "Create the geo-partitioned tables in every region before moving keys.",
  });
}

/** A region (or the commit across regions) refused a step of the move with an error of its own. */
export function moveAbandoned(refusal: Error & { code: string; hint?: string; detail?: string }): PgError {
  return new PgError({
    code: refusal.code as PgError["code"],
    message: `the move was abandoned: ${refusal.message}`,
    ...(refusal.hint === undefined ? {} : { hint: refusal.hint }),
    ...(refusal.detail === undefined ? {} : { detail: refusal.detail }),
  });
}

/** The move failed with something that carries no SQLSTATE: a fault of the proxy's. */
export function moveFailed(cause: unknown): PgError {
  return new PgError({
    code: SqlState.internal_error,
    message: `the move failed: ${cause instanceof Error ? cause.message : String(cause)}`,
  });
}

/**
 * With a majority authority a move may leave out a region that is out of reach, but not one it
 * needs: the destination, or a region a key's entry names (its rows may be there).
 */
export function moveNeedsRegion(region: string, why: string): PgError {
  return new PgError({
    code: SqlState.cannot_connect_now,
    message: `the move needs region ${region}, which is out of reach (${why}); nothing was moved`,
    hint: `Retry once region ${region} answers (SHOW HEALTH tells); moves between the regions that answer go ahead meanwhile.`,
  });
}
