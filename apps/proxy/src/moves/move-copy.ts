import type { RegionId } from "@geo/core";
import type { Lease } from "@geo/pool";
import type { PgError } from "@geo/proto";
import type { GeoTable } from "../directory/directory-store.js";
import { query } from "../directory/region-runner.js";
import { ident, inList, literal, qualified } from "../directory/sql-text.js";
import { countMismatch, tableMissingInDestination } from "./move-errors.js";

/** One row of a move's answer: a table's rows from one region. */
export interface MovedTable {
  readonly table: string;
  readonly from: RegionId;
  readonly to: RegionId;
  readonly rows: number;
  readonly state: "moved" | "in-doubt";
}

/**
 * A move's copy, inside its transactions: each source's tables locked against writers (`LOCK
 * TABLE ... IN EXCLUSIVE MODE`: readers go on), then per table, parents first, the keys' rows
 * read as JSON and inserted in the destination, then, children first, deleted in the source.
 * Each count must equal the one before it (XX001 otherwise: a writer outside the proxy).
 */
export async function copyRows(
  tables: readonly GeoTable[],
  sources: ReadonlyMap<RegionId, readonly string[]>,
  on: (region: RegionId) => Lease,
  to: RegionId,
): Promise<MovedTable[] | PgError> {
  const moved: MovedTable[] = [];
  if (sources.size === 0) return moved;
  const lockList = tables.map((table) => qualified(table.table)).join(", ");
  for (const from of sources.keys()) await query(on(from), `LOCK TABLE ${lockList} IN EXCLUSIVE MODE`);
  const columns = await columnsOf(tables, on(to));
  const counts = new Map<string, number>();
  for (const table of tables) {
    for (const [from, fromKeys] of sources) {
      const read = await query(on(from), readSql(table, fromKeys, columns.get(table.table)!));
      const count = Number(read.rows[0]?.["n"] ?? "0");
      counts.set(`${table.table}\u0000${from}`, count);
      if (count === 0) continue;
      const inserted = await query(
        on(to),
        insertSql(table, columns.get(table.table)!, read.rows[0]?.["rows"] ?? "[]"),
      );
      const insertedCount = Number(inserted.tag.split(" ")[2] ?? "-1");
      if (insertedCount !== count)
        return countMismatch(table.table, `inserted in ${to}`, count, insertedCount);
    }
  }
  for (const table of [...tables].reverse()) {
    for (const [from, fromKeys] of sources) {
      const count = counts.get(`${table.table}\u0000${from}`)!;
      const deleted = await query(
        on(from),
        `DELETE FROM ${qualified(table.table)} WHERE ${ident(table.key)} ${inList(fromKeys)}`,
      );
      const deletedCount = Number(deleted.tag.split(" ")[1] ?? "-1");
      if (deletedCount !== count)
        return countMismatch(table.table, `deleted from ${from}`, count, deletedCount);
      moved.push({ table: table.table, from, to, rows: count, state: "moved" });
    }
  }
  return moved;
}

/** The columns a copy carries: every stored column (generated ones are computed again). */
async function columnsOf(tables: readonly GeoTable[], lease: Lease): Promise<Map<string, string[]>> {
  const sql = `SELECT t.name, string_agg(quote_ident(a.attname), ',' ORDER BY a.attnum) AS columns
FROM (VALUES ${tables.map((table) => `(${literal(table.table)})`).join(", ")}) AS t(name)
JOIN pg_catalog.pg_attribute a ON a.attrelid = to_regclass(t.name) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
GROUP BY t.name`;
  const columns = new Map<string, string[]>();
  for (const row of (await query(lease, sql)).rows)
    columns.set(row["name"]!, (row["columns"] ?? "").split(","));
  for (const table of tables) {
    if (!columns.has(table.table)) throw tableMissingInDestination(table.table);
  }
  return columns;
}

/** The rows of the keys as one JSON array, with their count. */
function readSql(table: GeoTable, keys: readonly string[], columns: readonly string[]): string {
  return `SELECT count(*)::text AS n, coalesce(json_agg(r), '[]')::text AS rows FROM (SELECT ${columns.join(", ")} FROM ${qualified(table.table)} WHERE ${ident(table.key)} ${inList(keys)}) AS r`;
}

/** Inserts the JSON rows as they were (identity values kept). */
function insertSql(table: GeoTable, columns: readonly string[], json: string): string {
  const list = columns.join(", ");
  return `INSERT INTO ${qualified(table.table)} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::${qualified(table.table)}, ${literal(json)})`;
}
