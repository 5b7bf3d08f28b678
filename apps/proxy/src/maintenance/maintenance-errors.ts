import { PgError, SqlState, type SqlStateCode } from "@geo/proto";

/**
 * PostgreSQL's own refusal of VACUUM, CREATE INDEX CONCURRENTLY and the like inside a transaction
 * block, with its SQLSTATE and message (`PreventInTransactionBlock`): raised before any region
 * runs it, so a block never sees it run in some regions and not in others.
 */
export function cannotRunInBlock(command: string): PgError {
  return new PgError({
    code: SqlState.active_sql_transaction,
    message: `${command} cannot run inside a transaction block`,
  });
}

/**
 * PostgreSQL's own refusal of LOCK TABLE outside a transaction block (`RequireTransactionBlock`):
 * a lock released as soon as it is taken would lock nothing.
 */
export function onlyInBlock(command: string): PgError {
  return new PgError({
    code: SqlState.no_active_sql_transaction,
    message: `${command} can only be used in transaction blocks`,
  });
}

/** A maintenance command for several regions sent with the extended protocol. */
export function refuseExtendedMaintenance(command: string, regions: readonly string[]): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `${command} runs in several regions (${regions.join(", ")}) only through the simple query protocol`,
    hint: `Send it as a simple query (psql does; node-postgres does for a query without parameters; postgres.js with .simple()), or run it in each region with /* geo: region=<id> */ ${command}.`,
  });
}

/**
 * A maintenance command stopped at a region that failed: that region's own SQLSTATE and message,
 * with where it finished, where it failed and where it did not run, and how to complete it.
 */
export function maintenanceStopped(
  command: string,
  failed: string,
  cause: PgError,
  finished: readonly string[],
  notRun: readonly string[],
  indexName?: string,
): PgError {
  const regions = `Finished in: ${finished.length === 0 ? "none" : finished.join(", ")}. Failed in: ${failed}. Not run in: ${notRun.length === 0 ? "none" : notRun.join(", ")}.`;
  return new PgError({
    code: cause.code as SqlStateCode,
    message: `${command} failed in region ${failed}: ${cause.message}`,
    detail: cause.detail === undefined ? regions : `${cause.detail}\n${regions}`,
    hint: resumeHint(command, failed, indexName),
  });
}

function resumeHint(command: string, failed: string, indexName: string | undefined): string {
  const there = `/* geo: region=${failed} */`;
  switch (command) {
    case "CREATE INDEX CONCURRENTLY": {
      const name = indexName ?? "<index>";
      return `An INVALID index ${name} may be left in region ${failed}: drop it there with ${there} DROP INDEX CONCURRENTLY IF EXISTS ${name}, fix the cause, then run the statement again with IF NOT EXISTS${indexName === undefined ? " and the index's name" : ""} (the regions that finished keep their index).`;
    }
    case "REINDEX CONCURRENTLY":
      return `An INVALID index ending in _ccnew may be left in region ${failed}: drop it there with ${there} DROP INDEX CONCURRENTLY, fix the cause, then run the statement again.`;
    case "DROP INDEX CONCURRENTLY":
      return "Fix the cause, then run the statement again with IF EXISTS (the regions that finished have dropped the index).";
    default:
      return `Fix the cause in region ${failed}, then run the statement again (the regions that finished run it once more), or only where it did not finish with /* geo: region=<id> */.`;
  }
}
