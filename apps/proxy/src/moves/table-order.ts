import type { GeoTable } from "../directory/directory-store.js";
import { literal } from "../directory/sql-text.js";

/** A foreign key between two tables, by the names the configuration gives geo tables. */
export interface ForeignKey {
  readonly child: string;
  readonly parent: string;
}

/** The moved tables, parents before children (insert order; deletes go the other way). */
export interface TableOrder {
  readonly tables: readonly GeoTable[];
  /** A table outside the move that references one inside: the move is refused. */
  readonly outside: ForeignKey | undefined;
}

/**
 * Reads the foreign keys that touch the geo-partitioned tables from `pg_constraint`, by OID so
 * schemas and search paths cannot confuse names. Outside tables are named as `regclass` prints them.
 */
export function foreignKeySql(tables: readonly GeoTable[]): string {
  const names = tables
    .map((geo) => `(${literal(geo.table)}, to_regclass(${literal(geo.table)})::oid)`)
    .join(", ");
  return `WITH geo(name, oid) AS (VALUES ${names})
SELECT coalesce(child.name, c.conrelid::regclass::text) AS child, parent.name AS parent, (child.name IS NULL)::text AS outside
FROM pg_catalog.pg_constraint c
JOIN geo parent ON parent.oid = c.confrelid
LEFT JOIN geo child ON child.oid = c.conrelid
WHERE c.contype = 'f' AND c.conrelid <> c.confrelid`;
}

/** Orders the tables parent first (a stable topological sort; a cycle keeps configuration order). */
export function orderTables(
  tables: readonly GeoTable[],
  rows: readonly Record<string, string | null>[],
): TableOrder {
  const parentsOf = new Map<string, Set<string>>(tables.map((geo) => [geo.table, new Set<string>()]));
  let outside: ForeignKey | undefined;
  for (const row of rows) {
    const child = row["child"];
    const parent = row["parent"];
    if (child == null || parent == null) continue;
    if (row["outside"] === "true") {
      outside ??= { child, parent };
      continue;
    }
    parentsOf.get(child)?.add(parent);
  }
  const ordered: GeoTable[] = [];
  const placed = new Set<string>();
  let remaining = [...tables];
  while (remaining.length > 0) {
    const ready = remaining.filter((geo) => [...parentsOf.get(geo.table)!].every((p) => placed.has(p)));
    const next = ready.length > 0 ? ready : [remaining[0]!];
    for (const geo of next) {
      ordered.push(geo);
      placed.add(geo.table);
    }
    remaining = remaining.filter((geo) => !placed.has(geo.table));
  }
  return { tables: ordered, outside };
}
