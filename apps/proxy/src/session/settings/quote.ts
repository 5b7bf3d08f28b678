/**
 * Quoting for the SQL the proxy writes itself about settings (replays, the login check), as
 * PostgreSQL's quote_ident and quote_literal would: a name or value a client chose must never
 * change the statement's shape, whatever `standard_conforming_strings` the connection has.
 */

/**
 * Words that cannot name a setting unquoted: PostgreSQL 15's reserved and type/function-name
 * keywords (not a ColId), and the words SET and RESET read as their own syntax (SET SESSION ...,
 * SET LOCAL ..., SET TIME ZONE, SET NAMES, SET ROLE, SET SCHEMA, SET TRANSACTION, RESET ALL...).
 */
const NEEDS_QUOTES: ReadonlySet<string> = new Set(
  `all analyse analyze and any array as asc asymmetric both case cast check collate column constraint
create current_catalog current_date current_role current_time current_timestamp current_user default
deferrable desc distinct do else end except false fetch for foreign from grant group having in
initially intersect into lateral leading limit localtime localtimestamp not null offset on only or
order placing primary references returning select session_user some symmetric table then to trailing
true union unique user using variadic when where window with
authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull
join left like natural notnull outer overlaps right similar tablesample verbose
session local time names role schema transaction xml catalog characteristics`.split(/\s+/),
);

/** One part of a name: left bare when PostgreSQL reads it back unchanged, else double-quoted. */
export function quoteIdent(part: string): string {
  if (/^[a-z_][a-z0-9_$]*$/.test(part) && !NEEDS_QUOTES.has(part)) return part;
  return `"${part.replaceAll('"', '""')}"`;
}

/**
 * A setting's name as SET and RESET read it: each dot-separated part quoted when needed
 * (`some.var` is `"some".var`: SOME is reserved). GUC names compare without case, so
 * `DateStyle` may stay as written; custom names keep their dots.
 */
export function settingName(name: string): string {
  const parts = name.split(".");
  if (parts.some((part) => part === "")) return quoteIdent(name);
  // A bare part is folded to lower case, which changes nothing for a GUC name: `DateStyle` stays.
  return parts
    .map((part) => (quoteIdent(part.toLowerCase()) === part.toLowerCase() ? part : quoteIdent(part)))
    .join(".");
}

/** A string literal valid under either `standard_conforming_strings`: E'' when it holds a backslash. */
export function quoteLiteral(value: string): string {
  const doubled = value.replaceAll("'", "''");
  return value.includes("\\") ? `E'${doubled.replaceAll("\\", "\\\\")}'` : `'${doubled}'`;
}
