import type { FieldDescription } from "@geo/proto";
import { BackendCode, encodeQuery, type PgError } from "@geo/proto";
import type { ProxyRuntime } from "../server/runtime.js";
import { allValues } from "./data-row.js";
import { errorOf, type RegionChannel } from "./region-channel.js";
import { refuseShippingAnonymousRecord, unnamedShippedType } from "./value-errors.js";

/** pg_type OIDs of the anonymous row type and its array: no name casts a value back to them. */
export const RECORD_OID = 2249;
export const RECORD_ARRAY_OID = 2287;

/** One shipped column's type as the region's RowDescription reports it. */
export interface ShippedType {
  readonly oid: number;
  /** pg_attribute.atttypmod, -1 when none applies. */
  readonly typmod: number;
}

/**
 * The exact name the home statement casts a shipped column to: PostgreSQL's
 * `format_type(oid, typmod)`, asked of the region that reported the OID (types created by users
 * have different OIDs from server to server) and kept per region. The typmod is part of the name
 * (`bit(3)`, `character varying(8)`, `numeric(12,2)`), so no value is cut or rounded by the cast.
 * Without a typmod, three spellings would mean something else than the type itself and are named
 * so that they survive deparsing: `character` and `bit` mean length 1 (`bpchar`, `pg_catalog.bit`),
 * and `"char"[]` loses its array suffix (`pg_catalog._char`).
 */
const TYPE_NAMES_SQL = `SELECT m.oid, m.typmod, CASE
    WHEN m.typmod < 0 AND m.oid = 1042 THEN 'bpchar' WHEN m.typmod < 0 AND m.oid = 1014 THEN 'bpchar[]'
    WHEN m.typmod < 0 AND m.oid = 1560 THEN 'pg_catalog.bit' WHEN m.typmod < 0 AND m.oid = 1561 THEN 'pg_catalog.bit[]'
    WHEN m.oid = 1002 THEN 'pg_catalog._char'
    ELSE pg_catalog.format_type(m.oid::pg_catalog.oid, m.typmod) END
  FROM (VALUES $PAIRS) AS m(oid, typmod) JOIN pg_catalog.pg_type t ON t.oid = m.oid::pg_catalog.oid`;
const caches = new WeakMap<ProxyRuntime, Map<string, Map<string, string>>>();

/** The catalog query naming `types`: rows of (oid, typmod, name). */
export function typeNamesSql(types: readonly ShippedType[]): string {
  const pairs = types.map((t) => `(${Math.trunc(t.oid)}::int8, ${Math.trunc(t.typmod)})`);
  return TYPE_NAMES_SQL.replace("$PAIRS", pairs.join(", "));
}

const keyOf = (type: ShippedType): string => `${type.oid}:${type.typmod}`;

/** The types of a RowDescription's fields, as shipped. */
export function shippedTypes(fields: readonly FieldDescription[]): ShippedType[] {
  return fields.map((field) => ({ oid: field.typeOid, typmod: field.typeModifier }));
}

/**
 * The names of `types` in the region of `channel`. Refuses (0A000) a column of an anonymous
 * record type: its text form cannot be cast back to it, and no other name is exact.
 */
export async function typeNames(
  runtime: ProxyRuntime,
  channel: RegionChannel,
  types: readonly ShippedType[],
  columnNames: readonly string[] = [],
): Promise<string[]> {
  for (const [i, type] of types.entries())
    if (type.oid === RECORD_OID || type.oid === RECORD_ARRAY_OID)
      throw refuseShippingAnonymousRecord(columnNames[i] ?? `column ${i + 1}`);
  let byRegion = caches.get(runtime);
  if (byRegion === undefined) {
    byRegion = new Map();
    caches.set(runtime, byRegion);
  }
  let cache = byRegion.get(channel.region);
  if (cache === undefined) {
    cache = new Map();
    byRegion.set(channel.region, cache);
  }
  const missing = new Map<string, ShippedType>();
  for (const type of types) if (!cache.has(keyOf(type))) missing.set(keyOf(type), type);
  if (missing.size > 0) {
    // Through the channel, after anything already written on it (the settings replay).
    channel.query(encodeQuery({ sql: typeNamesSql([...missing.values()]) }));
    let error: PgError | null = null;
    for (;;) {
      const message = await channel.next();
      if (message.code === BackendCode.ReadyForQuery) break;
      if (message.code === BackendCode.ErrorResponse) error ??= errorOf(message);
      if (message.code !== BackendCode.DataRow) continue;
      const [oid, typmod, name] = allValues(message.payload);
      if (oid != null && typmod != null && name != null)
        cache.set(`${oid.toString("latin1")}:${typmod.toString("latin1")}`, name.toString("utf8"));
    }
    if (error !== null) throw error;
  }
  return types.map((type) => {
    const name = cache.get(keyOf(type));
    // Never a guessed name: "text" would compare, group and order an enum or a range as text.
    if (name === undefined) throw unnamedShippedType(channel.region, type.oid);
    return name;
  });
}
