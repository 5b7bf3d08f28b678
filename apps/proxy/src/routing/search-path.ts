import type { Analysis } from "@geo/sql";

/** Statements whose tables the planner places by their rows; the others name tables to change them. */
export const PLACED_BY_ROWS: ReadonlySet<Analysis["kind"]> = new Set([
  "select",
  "insert",
  "update",
  "delete",
  "merge",
  "copy",
]);

/** Schemas that cannot hold a table of the application's ahead of public. */
const NEVER_SHADOWS = new Set(["pg_catalog", "pg_temp"]);

/**
 * True when an unqualified name may resolve away from public under this search_path: a schema
 * other than the catalogs is searched ahead of public, or public is not searched at all. Only
 * the catalog can then say which table the name is.
 */
export function shadowsPublic(searchPath: readonly string[]): boolean {
  for (const schema of searchPath) {
    if (schema === "public") return false;
    if (!NEVER_SHADOWS.has(schema)) return true;
  }
  return true;
}

/** The unqualified names of a statement's tables that a search_path could place (catalog names aside). */
export function unqualifiedNames(tables: readonly { schema?: string; name: string }[]): string[] {
  const names = new Set<string>();
  for (const table of tables) {
    if (table.schema === undefined && !table.name.startsWith("pg_")) names.add(table.name);
  }
  return [...names];
}
