import { PgError, SqlState } from "@geo/proto";

/**
 * A column the home region would have to finish holds anonymous records (`row(...)`, a record
 * returned by a function, an array of them): their text form cannot be cast back to an anonymous
 * record, so no value could travel exactly. Refused rather than answered as something else.
 */
export function refuseShippingAnonymousRecord(column: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `the statement would ship anonymous records (column "${column}") to the home region, and their type cannot be named there`,
    hint: "Select the row's fields as columns of their own, or cast the row to a named composite type (CREATE TYPE ... AS (...)); or constrain the partition key to one region.",
  });
}

/** The region that described a shipped column has no type of its OID (dropped since): never guessed. */
export function unnamedShippedType(region: string, oid: number): PgError {
  return new PgError({
    code: SqlState.undefined_object,
    message: `region ${region} has no type with OID ${oid} to name a shipped column by`,
    hint: "The type was dropped or recreated while the statement ran; run the statement again.",
  });
}
