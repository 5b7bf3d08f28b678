import { PgError, SqlState } from "@geo/proto";

/**
 * Errors of RESTRIPE, the operator command that gives a striped table's sequences the stripes of
 * the regions configured now (docs/ids.md).
 */

/** RESTRIPE of a table that is not geo-partitioned with striped ids. */
export function restripeNeedsStripedTable(table: string, placement: string | undefined): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message:
      placement === undefined
        ? `RESTRIPE needs a configured table; ${table} is not in [[tables]]`
        : `RESTRIPE needs a geo-partitioned table with ids = "striped"; ${table} is ${placement === "geo_partitioned" ? "geo-partitioned without striped ids" : placement}`,
    hint:
      placement === undefined || placement === "geo_partitioned"
        ? `Set ids = "striped" on the [[tables]] entry for ${table} and restart the proxy, then run RESTRIPE ${table} again.`
        : "Only geo-partitioned tables have a copy of each sequence in every region; a replicated or pinned table's ids come from one region already.",
  });
}

/** RESTRIPE cannot hold every region's sequences: one region did not answer or refused. */
export function restripeRegionFailed(region: string, error: unknown): PgError {
  const cause = error instanceof Error ? error.message : String(error);
  return new PgError({
    code: error instanceof PgError ? error.code : SqlState.connection_failure,
    message: `RESTRIPE could not prepare region ${region}: ${cause}; no sequence was changed`,
    hint: "RESTRIPE changes every region's sequences together: run it again once every region answers.",
  });
}

/** The commit of a RESTRIPE failed in one region after others had committed. */
export function restripeIncomplete(region: string, committed: readonly string[], error: unknown): PgError {
  const cause = error instanceof Error ? error.message : String(error);
  return new PgError({
    code: SqlState.transaction_resolution_unknown,
    message: `RESTRIPE committed in ${committed.length === 0 ? "no region" : committed.join(", ")} but not in ${region}: ${cause}`,
    hint: "Run RESTRIPE again: it starts every region above the highest id any region has handed out, so running it twice is safe.",
  });
}

/** A region's next id would pass its sequence's largest value. */
export function restripePastMaximum(region: string, sequence: string, next: bigint, max: bigint): PgError {
  return new PgError({
    code: SqlState.numeric_value_out_of_range,
    message: `RESTRIPE would start ${sequence} in ${region} at ${next}, past its largest value ${max}; no sequence was changed`,
    hint: "Widen the column and its sequence (ALTER TABLE ... ALTER COLUMN ... TYPE bigint; ALTER SEQUENCE ... AS bigint) through geoproxy, then run RESTRIPE again.",
  });
}

/** RESTRIPE inside a transaction block: its changes commit on their own, region by region. */
export function restripeInTransaction(): PgError {
  return new PgError({
    code: SqlState.active_sql_transaction,
    message: "RESTRIPE cannot run inside a transaction block",
    hint: "COMMIT or ROLLBACK first: RESTRIPE commits on its own, in every region.",
  });
}
