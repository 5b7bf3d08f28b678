import { PgError } from "@geo/proto";
import { type Analysis, qualifyTables } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { PLACED_BY_ROWS, shadowsPublic, unqualifiedNames } from "../routing/search-path.js";
import { lookUpInCatalog } from "./catalog-lookup.js";
import { quoteIdent, quoteLiteral } from "./settings/quote.js";

/**
 * Under a search_path that searches another schema ahead of public, an unqualified name may be
 * that schema's table, configured (`app.orders`) or not, and only the catalog knows. Here the
 * session's own connection resolves each such name as PostgreSQL would for the statement
 * (`to_regclass` under the session's search_path), and the statement is planned again with the
 * schemas written in, so it is routed as the table it reads. The answer is read for each
 * statement, never cached: a table created since in an earlier schema would change it.
 *
 * Returns the qualified statement; null when there is nothing to resolve; "failed" when the
 * lookup failed, its error already sent.
 */
export async function withQualifiedNames(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<Analysis | "failed" | null> {
  const names = namesToResolve(session, analysis);
  if (names.length === 0) return null;
  if (session.refuseInFailedBlock(analysis, mode)) return "failed";
  const schemas = await lookUpSchemas(session, analysis, mode, names);
  if (schemas === "failed") return "failed";
  return qualifiedAnalysis(session, analysis, schemas);
}

/**
 * The unqualified names of a statement that may resolve to another table than public's (empty
 * when none can): the session's search_path (its block's SET LOCAL included) searches another
 * schema ahead of public, or the session has temporary tables, which come before every schema.
 * A batch holding such a statement is run a statement at a time.
 */
export function namesToResolve(session: SessionPort, analysis: Analysis): string[] {
  if (!PLACED_BY_ROWS.has(analysis.kind)) return [];
  // With one region every name is read there, whichever table it is.
  if (session.runtime.router.topology.regions.length === 1) return [];
  const searchPath = session.searchPath();
  const shadowed = (searchPath !== undefined && shadowsPublic(searchPath)) || session.pins.mayHoldTempTables;
  return shadowed ? unqualifiedNames(analysis.tables) : [];
}

/**
 * True when a statement may change what the statements after it in the same string resolve
 * their names to (a search_path set or reset, a temporary table made, DISCARD): they are then
 * run one at a time, each resolved after the one before it took effect.
 */
export function changesNameResolution(analysis: Analysis): boolean {
  return analysis.sessionEffects.some((effect) => {
    const name = effect.name?.toLowerCase();
    switch (effect.kind) {
      case "set":
      case "reset":
      case "set-config":
        return name === undefined || name === "search_path";
      case "create-temp":
      case "discard":
        return true;
      default:
        return false;
    }
  });
}

/** Each name's schema under the session's search_path; a name no schema holds is left out. */
async function lookUpSchemas(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  names: readonly string[],
): Promise<Map<string, string> | "failed"> {
  const found = new Map<string, string>();
  const answered = await lookUpInCatalog(session, analysis, mode, schemasSql(names), (values) =>
    readSchemaRow(values, names, found),
  );
  return answered === "failed" ? "failed" : found;
}

/** The statement planned again with each resolved name's schema written in front of it. */
export function qualifiedAnalysis(
  session: SessionPort,
  analysis: Analysis,
  schemas: ReadonlyMap<string, string>,
): Analysis | null {
  const qualified = session.runtime.router.analyze(qualifyTables(analysis.text, (name) => schemas.get(name)));
  if (qualified instanceof PgError) return null;
  // Temporary tables live on the connection the session is pinned to: a statement reading only
  // them runs there. One that also reads other tables is planned as it is (and refused: a
  // temporary table has no placement).
  const pinned = session.pinnedLeg;
  if (
    pinned !== null &&
    qualified.hints.region === undefined &&
    qualified.hints.key === undefined &&
    qualified.tables.length > 0 &&
    qualified.tables.every((table) => table.schema === "pg_temp")
  )
    return { ...qualified, hints: { ...qualified.hints, region: pinned.region } };
  return qualified;
}

/** Each name (quoted as an identifier) with its schema, in the order asked, for names a schema holds. */
export function schemasSql(names: readonly string[]): string {
  const list = names.map((name) => quoteLiteral(quoteIdent(name))).join(", ");
  // A temporary table's schema is named per backend (pg_temp_3); pg_temp names it anywhere.
  return `SELECT x.name, CASE WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 'pg_temp' ELSE n.nspname END
    FROM pg_catalog.unnest(ARRAY[${list}]::pg_catalog.text[]) WITH ORDINALITY AS x(name, i)
    JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(x.name)
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    ORDER BY x.i`;
}

/** Records the schema of one answer row of `schemasSql`. */
export function readSchemaRow(
  values: readonly (Buffer | null)[],
  names: readonly string[],
  found: Map<string, string>,
): void {
  const [quoted, schema] = values;
  if (quoted === null || quoted === undefined || schema === null || schema === undefined) return;
  const index = names.findIndex((name) => quoteIdent(name) === quoted.toString("utf8"));
  if (index >= 0) found.set(names[index]!, schema.toString("utf8"));
}
