import { PgError, SqlState } from "@geo/proto";

/**
 * The errors a scatter-gather read originates itself, as named factories with real SQLSTATEs and
 * hints. Errors a region's PostgreSQL sends are passed on as they came.
 */

/** A region's connection broke while it answered its part: the statement fails, never half answered. */
export function regionLost(region: string, cause: PgError): PgError {
  return new PgError({
    code: cause.code === SqlState.admin_shutdown ? SqlState.admin_shutdown : SqlState.connection_failure,
    message: `region ${region} failed while answering its part of the statement: ${cause.message}`,
    hint: "Nothing was answered; run the statement again once the region is reachable.",
  });
}

/** The rows shipped home, or held for a suspended portal, passed a configured bound. */
export function gatherBoundExceeded(
  what: "rows" | "bytes",
  limit: number,
  regions: readonly string[],
  held: "shipped" | "suspended" = "shipped",
): PgError {
  const setting = what === "rows" ? "max_rows" : "max_bytes";
  const where =
    held === "shipped" ? "shipped to the home region" : "held by geoproxy for a row-limited Execute";
  return new PgError({
    code: SqlState.configuration_limit_exceeded,
    message: `the statement needs more than ${limit} ${what} of regions ${regions.join(", ")} ${where}`,
    hint: `Narrow the statement (a filter on the partition key, fewer columns), or raise [gather] ${setting} in the geoproxy configuration.`,
  });
}

/** Strict residency: the answer could only be finished by shipping rows out of their region. */
export function refuseShippingResident(regions: readonly string[], home: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `the statement would ship rows of a strict-residency table from ${regions.join(", ")} to the home region ${home}`,
    hint: "Sort by integer, numeric, float, bool or uuid columns (merged in the proxy), or constrain the partition key to one region.",
  });
}

/** A binary parameter of a type whose wire form the proxy does not read, needed for LIMIT/OFFSET. */
export function unreadableLimitParam(index: number, typeOid: number): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `parameter $${index} (type OID ${typeOid}) is a LIMIT or OFFSET of a statement spanning regions and was sent in binary of an unknown width`,
    hint: "Send the parameter as text, or as int2, int4 or int8 in binary.",
  });
}

/**
 * A prepared statement's columns changed since the client was told them (the schema changed in
 * between): a scatter's Describe answered from the cached shape, or a pooled connection's fresh
 * copy answers with other columns. PostgreSQL's own answer in that case, with its routine, which
 * drivers that prepare again on it (postgres.js) read.
 */
export function resultTypeChanged(): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: "cached plan must not change result type",
    hint: "Describe and execute the statement again.",
    routine: "RevalidateCachedQuery",
  });
}

/**
 * A home finish would compare a shipped text value in the home database's default collation, while
 * its column has its own: the answer could differ from one PostgreSQL's. `expression` names an
 * output column computed from the statement's tables, whose collation the proxy cannot see.
 */
export function collationNotCarried(column: string, collation: string, expression?: string): PgError {
  const what =
    expression === undefined
      ? `column ${column} has collation ${collation}`
      : `the collation of expression ${expression} cannot be known (column ${column} has collation ${collation})`;
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `${what}: a statement spanning regions finished in the home region would compare it in the default collation`,
    hint: `Write an explicit COLLATE ${collation} on that column in the ORDER BY, GROUP BY or DISTINCT, or route the statement to one region with a key.`,
  });
}

/**
 * A region's database orders text by another default collation than the home region's: each
 * region compares, sorts and cuts its part by its own, and the home finish by home's, so the
 * combined answer could differ from one PostgreSQL's. `homeOptions` are the CREATE DATABASE
 * options that give home's collation.
 */
export function databaseCollationDiffers(
  region: string,
  collation: string,
  home: string,
  homeCollation: string,
  database: string,
  homeOptions: string,
): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `region ${region}'s database "${database}" has default collation (${collation}), the home region ${home}'s has (${homeCollation}): a statement spanning several regions would compare text differently in each`,
    hint: `Create ${region}'s database with the home region's collation (CREATE DATABASE ... ${homeOptions}) and move its rows there, or constrain the statement to one region with a key or a geo: hint.`,
  });
}

/** A text LIMIT or OFFSET parameter of a statement spanning regions that is no number. */
export function invalidLimitParam(text: string): PgError {
  return new PgError({
    code: SqlState.invalid_text_representation,
    message: `invalid input syntax for type bigint: "${text}"`,
  });
}

/** PostgreSQL refuses a Bind whose result formats are neither none, one, nor one per column. */
export function resultFormatsMismatch(formats: number, columns: number): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    message: `bind message has ${formats} result formats but query has ${columns} columns`,
  });
}

/** A region's answer to the proxy's own Describe or Execute came in an order the protocol does not allow. */
export function regionOutOfOrder(region: string, what: string): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    message: `region ${region} answered ${what} out of order`,
  });
}
