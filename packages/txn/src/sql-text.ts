/** A string literal for PostgreSQL with standard_conforming_strings on (the default since 9.1). */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export const prepareTransaction = (gid: string): string => `PREPARE TRANSACTION ${quoteLiteral(gid)}`;
export const commitPrepared = (gid: string): string => `COMMIT PREPARED ${quoteLiteral(gid)}`;
export const rollbackPrepared = (gid: string): string => `ROLLBACK PREPARED ${quoteLiteral(gid)}`;
export const rollback = "ROLLBACK";

/**
 * This coordinator's prepared transactions in the connection's database. Age is measured by the
 * server's own clock so a skewed proxy clock cannot make a young transaction look old. COMMIT/ROLLBACK
 * PREPARED only work from the database that prepared, hence the database filter.
 */
export function scanPrepared(prefix: string): string {
  const start = quoteLiteral(`${prefix}_`);
  return (
    "SELECT gid, (extract(epoch FROM clock_timestamp() - prepared) * 1000)::bigint::text AS age_ms " +
    `FROM pg_prepared_xacts WHERE database = current_database() AND left(gid, ${prefix.length + 1}) = ${start}`
  );
}

/** PostgreSQL's error for COMMIT/ROLLBACK PREPARED of an id it does not hold. */
export const UNDEFINED_OBJECT = "42704";
