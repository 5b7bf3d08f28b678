import { PgError, SqlState, type SqlStateCode } from "@geo/proto";
import { TxnError } from "@geo/txn";

/**
 * A @geo/txn failure as the client sees it. A participant's own refusal (a deferred unique
 * violation at PREPARE) is passed on as PostgreSQL sent it, with its detail and constraint; the
 * coordinator's own errors keep their SQLSTATE, hint and the region they concern.
 */
export function txnErrorToPg(error: unknown): PgError {
  if (error instanceof TxnError) {
    const cause = error.cause;
    if (cause instanceof PgError && cause.code === error.code) return cause;
    return new PgError({
      code: error.code as SqlStateCode,
      message: error.message,
      ...(error.detail === undefined ? {} : { detail: error.detail }),
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    });
  }
  if (error instanceof PgError) return error;
  return new PgError({
    code: SqlState.internal_error,
    message: `distributed transaction failed: ${error instanceof Error ? error.message : String(error)}`,
  });
}

/** The decision log could not be opened: without it no write may span regions. */
export function decisionLogUnavailable(cause: unknown): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message: `writes across regions are unavailable: the decision log could not be opened: ${cause instanceof Error ? cause.message : String(cause)}`,
    hint: "Check [txn] in the configuration (log_path, data_dir or log_table) and the proxy's log.",
  });
}

/** The client's own PREPARE TRANSACTION in a block that wrote in several regions. */
export function refuseClientPrepareAcrossRegions(regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `PREPARE TRANSACTION is not supported for a transaction that wrote in several regions (${regions.join(", ")})`,
    hint: "Use COMMIT: geoproxy commits writes across regions in two phases itself.",
  });
}

/** A write spread over regions sent with the extended protocol (its parameters would have to be re-bound per region). */
export function refuseExtendedDistributedWrite(regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `a single statement writing in several regions (${regions.join(", ")}) is executed only through the simple query protocol`,
    hint: "Send it as a simple query, or write each region's rows with a statement of its own inside one transaction block.",
  });
}

/**
 * A block written in several regions in a database other than the one the endpoints name: the
 * commit's retries and its recovery open the endpoint's database, where PostgreSQL would not let
 * them finish a transaction prepared elsewhere.
 */
export function refuseTwoPhaseOutsideEndpointDatabase(database: string, endpointDatabase: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `a transaction that wrote in several regions can only commit in the database the region endpoints name ("${endpointDatabase}"), not in "${database}"`,
    hint: `Set database = "${database}" on every region's primary in the configuration, or write one region per transaction.`,
  });
}

/** A region the block only read failed its COMMIT: nothing written may commit either. */
export function readLegCommitFailed(region: string, cause: unknown): PgError {
  if (cause instanceof PgError) return cause;
  return new PgError({
    code: SqlState.transaction_rollback,
    message: `the transaction was rolled back: its COMMIT failed in region ${region}, which it read: ${cause instanceof Error ? cause.message : String(cause)}`,
  });
}
