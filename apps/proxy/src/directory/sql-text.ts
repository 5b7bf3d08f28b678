/**
 * SQL text the proxy writes itself for the directory and moves. Everything goes out over the
 * simple protocol (pooled connections run one string at a time), so values are literals: an
 * escape-string literal doubles quotes and backslashes whatever `standard_conforming_strings` is.
 */

/** `E'...'`: the text exactly, as PostgreSQL reads it back. */
export function literal(text: string): string {
  return `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** A text array literal for `= ANY(...)`: `ARRAY[E'a', E'b']::text[]`. */
export function textArray(values: readonly string[]): string {
  return values.length === 0 ? "ARRAY[]::text[]" : `ARRAY[${values.map(literal).join(", ")}]::text[]`;
}

/**
 * `IN (E'a', E'b')`: untyped literals take the key column's own type (text, bigint, uuid, ...),
 * so the comparison can use the column's index.
 */
export function inList(values: readonly string[]): string {
  return `IN (${values.map(literal).join(", ")})`;
}

/** A quoted identifier. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A table name as configured (`users` or `app.users`), quoted part by part. Configured names are
 * the case-folded names PostgreSQL stores, so quoting keeps them as they are.
 */
export function qualified(name: string): string {
  return name.split(".").map(ident).join(".");
}
