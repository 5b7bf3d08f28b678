import { BackendCode, encodeQuery, type FieldDescription, type PgError } from "@geo/proto";
import type { TableRef } from "@geo/sql";
import type { ProxyRuntime } from "../server/runtime.js";
import { allValues } from "./data-row.js";
import { collationNotCarried } from "./errors.js";
import { errorOf, type RegionChannel } from "./region-channel.js";

/**
 * Shipped values are cast to their bare type name at home, so they compare in the home database's
 * default collation. A column whose own collation differs would be ordered, grouped or compared
 * otherwise than by one PostgreSQL holding every row: such a home finish is refused, never guessed.
 *
 * Table OIDs are the describing server's own, so the catalog is asked on that region. Collation OIDs
 * 0 (not collatable) and 100 (`default`) are the only ones a bare cast reproduces.
 */

/** A shipped column the home finish compares, and whether the statement named its collation. */
export interface ComparedColumn {
  readonly field: FieldDescription;
  readonly explicitCollation: boolean;
}

/** `table.column` and collation name of a column in a non-default collation; null for the default. */
type ColumnCollation = { readonly column: string; readonly collation: string } | null;

interface RegionCache {
  readonly columns: Map<string, ColumnCollation>;
  /** Whether the type takes a collation (pg_type.typcollation <> 0). */
  readonly collatable: Map<number, boolean>;
}

const caches = new WeakMap<ProxyRuntime, Map<string, RegionCache>>();

function cacheOf(runtime: ProxyRuntime, region: string): RegionCache {
  let byRegion = caches.get(runtime);
  if (byRegion === undefined) {
    byRegion = new Map();
    caches.set(runtime, byRegion);
  }
  let cache = byRegion.get(region);
  if (cache === undefined) {
    cache = { columns: new Map(), collatable: new Map() };
    byRegion.set(region, cache);
  }
  return cache;
}

const NON_DEFAULT = "a.attcollation NOT IN (0, 100)";
const NAMED = `format('%s.%s', quote_ident(c.relname), quote_ident(a.attname)), quote_ident(co.collname)
  FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
  JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation`;

function sqlLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function qualifiedName(table: TableRef): string {
  const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
  return table.schema === undefined ? ident(table.name) : `${ident(table.schema)}.${ident(table.name)}`;
}

/** Runs catalog statements through the channel (after anything already written on it); rows by their first value. */
async function catalogRows(channel: RegionChannel, sql: string): Promise<string[][]> {
  channel.query(encodeQuery({ sql }));
  const rows: string[][] = [];
  let error: PgError | null = null;
  for (;;) {
    const message = await channel.next();
    if (message.code === BackendCode.ReadyForQuery) break;
    if (message.code === BackendCode.ErrorResponse) error ??= errorOf(message);
    if (message.code !== BackendCode.DataRow) continue;
    rows.push(allValues(message.payload).map((value) => value?.toString("utf8") ?? ""));
  }
  if (error !== null) throw error;
  return rows;
}

/**
 * Throws 0A000 when a compared column's collation would be lost at home: a table column in a
 * collation other than the default (unless the statement wrote a COLLATE for it), or a collatable
 * expression of a statement whose tables hold any such column (its collation cannot be known).
 */
export async function checkCollations(
  runtime: ProxyRuntime,
  channel: RegionChannel,
  compared: readonly ComparedColumn[],
  tables: readonly TableRef[],
): Promise<void> {
  const cache = cacheOf(runtime, channel.region);
  const implicit = compared.filter((c) => !c.explicitCollation).map((c) => c.field);
  const bound = implicit.filter((f) => f.tableOid !== 0 && f.columnAttr > 0);
  const expressions = implicit.filter((f) => f.tableOid === 0 || f.columnAttr <= 0);
  const keyOf = (f: FieldDescription) => `${f.tableOid}:${f.columnAttr}`;
  const missingColumns = [...new Set(bound.map(keyOf).filter((key) => !cache.columns.has(key)))];
  const missingTypes = [
    ...new Set(expressions.map((f) => f.typeOid).filter((oid) => !cache.collatable.has(oid))),
  ];
  const statements: string[] = [];
  if (missingColumns.length > 0) {
    const pairs = missingColumns.map((key) => `(${key.replace(":", ", ")})`).join(", ");
    statements.push(
      `SELECT 'c', a.attrelid::int8 || ':' || a.attnum, ${NAMED} WHERE ${NON_DEFAULT} AND (a.attrelid, a.attnum) IN (${pairs})`,
    );
  }
  if (missingTypes.length > 0) {
    statements.push(
      `SELECT 't', oid::int8, (typcollation <> 0)::text FROM pg_catalog.pg_type WHERE oid IN (${missingTypes.join(", ")})`,
    );
  }
  if (statements.length > 0) {
    const rows = await catalogRows(channel, statements.join("; "));
    for (const key of missingColumns) cache.columns.set(key, null);
    for (const oid of missingTypes) cache.collatable.set(oid, false);
    for (const [kind, key = "", a = "", b = ""] of rows) {
      if (kind === "c") cache.columns.set(key, { column: a, collation: b });
      else if (kind === "t") cache.collatable.set(Number(key), a === "true");
    }
  }
  for (const field of bound) {
    const found = cache.columns.get(keyOf(field));
    if (found != null) throw collationNotCarried(found.column, found.collation);
  }
  const expression = expressions.find((f) => cache.collatable.get(f.typeOid) === true);
  if (expression === undefined || tables.length === 0) return;
  // Asked each time: the names resolve through the session's search_path.
  const names = [...new Set(tables.map(qualifiedName))].map(sqlLiteral).join(", ");
  const [found] = await catalogRows(
    channel,
    `SELECT ${NAMED} WHERE ${NON_DEFAULT} AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attrelid IN (SELECT to_regclass(n) FROM unnest(ARRAY[${names}]::text[]) AS t(n)) LIMIT 1`,
  );
  if (found !== undefined) throw collationNotCarried(found[0] ?? "", found[1] ?? "", expression.name);
}
