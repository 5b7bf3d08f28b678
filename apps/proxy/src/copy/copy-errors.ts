import { PgError, SqlState } from "@geo/proto";
import type { RowFault } from "./row-reader.js";

/**
 * A row of COPY data whose key cannot be read (a missing field, an unterminated quote, a binary
 * field of the wrong size) or is NULL: the rows cannot be placed, so nothing is loaded anywhere.
 * The CONTEXT names the line as PostgreSQL does (`COPY t, line n`).
 */
export function copyRowUnroutable(table: string, fault: RowFault): PgError {
  const where = `COPY ${table}, line ${fault.line}`;
  if (fault.reason === "null-key") {
    return new PgError({
      code: SqlState.not_null_violation,
      message: `${fault.message}: the row's region is chosen by its key`,
      where,
      hint: "Give every row a key, or load rows without one directly into the region that should hold them.",
    });
  }
  return new PgError({
    code: SqlState.bad_copy_file_format,
    message: fault.message,
    where,
    hint: "Fix that line of the data (each row needs its key field, readable in the COPY's format); nothing was loaded.",
  });
}

/**
 * COPY ... TO STDOUT of rows in several regions, sent with the extended protocol: the proxy
 * combines the regions' rows for it only on the simple-query path.
 */
export function copyToNeedsSimpleQuery(): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: "COPY ... TO STDOUT of rows in several regions is answered only when sent as a simple query",
    hint: "Send the COPY as a simple query (psql's \\copy does), which geoproxy answers as the SELECT it stands for; or constrain it to one key.",
  });
}

/** COPY into a geo-partitioned table whose column list leaves the key out. */
export function copyWithoutKeyColumn(table: string, key: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `COPY into ${table} without its key column ${key} cannot place its rows in regions`,
    hint: `List ${key} in the COPY's column list (or leave the list out to load every column).`,
  });
}

/** Binary COPY keyed by a type whose binary form the proxy does not read. */
export function copyBinaryKeyType(
  table: string,
  key: string,
  type: string,
  readable: readonly string[],
): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `binary COPY into ${table} cannot read its key column ${key} of type ${type}`,
    hint: `Send the data in FORMAT text or csv, or key the table by one of ${readable.join(", ")}.`,
  });
}

/** A row whose key lives in another region than a `geo: region=` hint on the COPY names. */
export function copyRowElsewhere(
  table: string,
  line: number,
  key: string,
  home: string,
  hinted: string,
): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `COPY into ${table} with a region=${hinted} hint got a row whose key ${key} lives in ${home}`,
    where: `COPY ${table}, line ${line}`,
    hint: `Load only ${hinted}'s rows with that hint, or leave the hint out so each row goes to its own region.`,
  });
}

/** The COPY's table has no columns the catalog reports (it vanished, or the name is not a table). */
export function copyTableUnreadable(table: string): PgError {
  return new PgError({
    code: SqlState.undefined_table,
    message: `the columns of ${table} could not be read, so COPY cannot find its key`,
    hint: "Check that the table exists under the session's search_path, or qualify its name.",
  });
}

/** A CancelRequest (or the client leaving) stopped a COPY split across regions: nothing was loaded. */
export function copyCancelled(): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: "canceling statement due to user request",
    hint: "The COPY was stopped in every region and nothing was loaded; run it again to load the rows.",
  });
}
