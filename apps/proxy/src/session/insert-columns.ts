import { PgError } from "@geo/proto";
import { type Analysis, insertColumnCount, insertWithColumns } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { lookUpInCatalog } from "./catalog-lookup.js";
import { quoteIdent, quoteLiteral } from "./settings/quote.js";

/**
 * An INSERT without a column list gives its values to the table's first columns in table
 * order, which the proxy does not know, so it cannot read each row's key and the statement is
 * refused across regions. Here such an INSERT (only one the planner refuses) asks PostgreSQL
 * for the table's columns (the session's search_path resolves the name, as for the INSERT
 * itself) and is planned again with the column list PostgreSQL would have used. The columns
 * are read for each statement, never cached: a column dropped or added since would shift them.
 *
 * Returns the statement with its column list; null when there is nothing to do; "failed" when
 * the lookup failed, its error (PostgreSQL's, such as 42P01 for a missing table) already sent.
 */
export async function withColumnList(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<Analysis | "failed" | null> {
  const router = session.runtime.router;
  const insert = analysis.insert;
  if (insert === undefined || insert.columns !== undefined || router.topology.regions.length === 1) {
    return null;
  }
  if (router.plan(analysis).kind !== "refused") return null;
  const table = analysis.tables[insert.table];
  const count = insertColumnCount(analysis.text);
  if (table === undefined || count === undefined || count === 0) return null;
  const relation = [table.schema, table.name]
    .filter((part) => part !== undefined)
    .map((part) => quoteIdent(part as string))
    .join(".");
  const sql = `SELECT a.attname FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = ${quoteLiteral(relation)}::pg_catalog.regclass AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY a.attnum`;
  const columns: string[] = [];
  const found = await lookUpInCatalog(session, analysis, mode, sql, ([name]) => {
    if (name) columns.push(name.toString("utf8"));
  });
  if (found === "failed") return "failed";
  // More values than columns: PostgreSQL's own error, from the statement as written.
  if (count > columns.length) return null;
  const listed = router.analyze(insertWithColumns(analysis.text, columns.slice(0, count)));
  return listed instanceof PgError ? null : listed;
}
