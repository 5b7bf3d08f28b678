/**
 * A database's default collation as `pg_database` records it, read so that every region's can be
 * compared with the home region's. Text sorts, groups, compares and takes min/max/DISTINCT in
 * each region under that region's database default; two databases whose defaults differ in any
 * of these fields can order the same strings differently, so none is ignored.
 *
 * The catalog columns differ by version: `datlocprovider` and `daticulocale` appeared in 15,
 * `daticurules` in 16, and 17 renamed `daticulocale` to `datlocale`. The row is read as JSON so a
 * column another version lacks is absent, never an error.
 */

/** The fields of a database's default collation that decide how it orders text. */
export interface DatabaseCollation {
  /** `libc`, `icu` or `builtin` (a server before 15 has only libc). */
  readonly provider: string;
  readonly collate: string;
  readonly ctype: string;
  /** The ICU (or builtin) locale; null for libc. */
  readonly locale: string | null;
  /** ICU tailoring rules (16+); null when none. */
  readonly rules: string | null;
  /** The server encoding: the byte order "C" compares is the encoding's. */
  readonly encoding: string;
  /**
   * The version of the collation library the server runs now for that locale (15+), null where
   * it reports none ("C", "POSIX", servers before 15). Two versions of ICU or glibc can order the
   * same locale differently.
   */
  readonly version: string | null;
}

const PROVIDERS: Readonly<Record<string, string>> = { c: "libc", i: "icu", b: "builtin", d: "default" };

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The statement that reads `database`'s default collation. `pg_database` is shared by every
 * database of a server, so any connection to it can read it. `serverVersion` is the server's
 * `server_version` ParameterStatus: the actual library version can only be asked from 15 on.
 */
export function collationQuery(database: string, serverVersion: string | undefined): string {
  const major = Number.parseInt(serverVersion ?? "", 10);
  const version =
    Number.isFinite(major) && major >= 15
      ? "pg_catalog.pg_database_collation_actual_version(d.oid)"
      : "NULL::text";
  return `SELECT pg_catalog.to_jsonb(d)::text, pg_catalog.pg_encoding_to_char(d.encoding)::text, ${version}
  FROM pg_catalog.pg_database d WHERE d.datname = ${literal(database)}`;
}

function field(row: Readonly<Record<string, unknown>>, ...names: string[]): string | null {
  for (const name of names) {
    const value = row[name];
    if (typeof value === "string") return value;
  }
  return null;
}

/**
 * The collation in the answer to `collationQuery`, or null when the answer has no row (no such
 * database) or is not what that statement returns.
 */
export function parseCollation(rows: readonly (readonly (string | null)[])[]): DatabaseCollation | null {
  const [row] = rows;
  if (row === undefined || row[0] == null || row[1] == null) return null;
  let json: unknown;
  try {
    json = JSON.parse(row[0]);
  } catch {
    return null;
  }
  if (typeof json !== "object" || json === null) return null;
  const record = json as Readonly<Record<string, unknown>>;
  const collate = field(record, "datcollate");
  const ctype = field(record, "datctype");
  if (collate === null || ctype === null) return null;
  const provider = field(record, "datlocprovider") ?? "c";
  return {
    provider: PROVIDERS[provider] ?? provider,
    collate,
    ctype,
    locale: field(record, "datlocale", "daticulocale"),
    rules: field(record, "daticurules"),
    encoding: row[1],
    version: row[2] ?? null,
  };
}

/** Whether two databases order, group and compare text alike by default. */
export function sameCollation(a: DatabaseCollation, b: DatabaseCollation): boolean {
  return (
    a.provider === b.provider &&
    a.collate === b.collate &&
    a.ctype === b.ctype &&
    a.locale === b.locale &&
    a.rules === b.rules &&
    a.encoding === b.encoding &&
    a.version === b.version
  );
}

function quoted(text: string): string {
  return `"${text.replaceAll('"', '\\"')}"`;
}

/** In words, for logs, alerts and errors: `icu locale "und", LC_COLLATE "C", LC_CTYPE "C", UTF8, version 153.112`. */
export function describeCollation(collation: DatabaseCollation): string {
  const parts = [collation.provider];
  if (collation.locale !== null) parts[0] = `${collation.provider} locale ${quoted(collation.locale)}`;
  if (collation.rules !== null) parts.push(`rules ${quoted(collation.rules)}`);
  parts.push(`LC_COLLATE ${quoted(collation.collate)}`, `LC_CTYPE ${quoted(collation.ctype)}`);
  parts.push(collation.encoding);
  if (collation.version !== null) parts.push(`version ${collation.version}`);
  return parts.join(", ");
}

/**
 * The options of CREATE DATABASE that give a database this default collation:
 * `TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C'`.
 * A library version cannot be chosen: it is the one the server was built with.
 */
export function createDatabaseOptions(collation: DatabaseCollation): string {
  const parts = ["TEMPLATE template0", `ENCODING ${literal(collation.encoding)}`];
  if (collation.provider !== "default") parts.push(`LOCALE_PROVIDER ${collation.provider}`);
  if (collation.locale !== null)
    parts.push(
      `${collation.provider === "icu" ? "ICU_LOCALE" : "BUILTIN_LOCALE"} ${literal(collation.locale)}`,
    );
  if (collation.rules !== null) parts.push(`ICU_RULES ${literal(collation.rules)}`);
  if (collation.collate === collation.ctype) parts.push(`LOCALE ${literal(collation.collate)}`);
  else parts.push(`LC_COLLATE ${literal(collation.collate)}`, `LC_CTYPE ${literal(collation.ctype)}`);
  return parts.join(" ");
}
