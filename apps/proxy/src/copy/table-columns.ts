import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { lookUpInCatalog } from "../session/catalog-lookup.js";
import { quoteIdent, quoteLiteral } from "../session/settings/quote.js";

/** A column COPY loads when no column list is given. */
export interface TableColumn {
  readonly name: string;
  readonly typeOid: number;
  readonly typeName: string;
}

/**
 * The columns of `table` in table order, as COPY without a column list reads them (generated
 * columns left out), asked of PostgreSQL in the session's region, on the session's connection
 * there (its search_path resolves the name, as it does for the COPY; in a block, the block's
 * own schema changes are seen). Read for each statement, never cached. Resolves with "failed"
 * when PostgreSQL refused (its error, 42P01 for a missing table, already sent).
 */
export async function tableColumns(
  session: SessionPort,
  analysis: Analysis,
  table: { readonly schema?: string; readonly name: string },
  mode: StatementMode,
): Promise<TableColumn[] | "failed"> {
  const relation = [table.schema, table.name]
    .filter((part) => part !== undefined)
    .map((part) => quoteIdent(part as string))
    .join(".");
  const sql = `SELECT a.attname, a.atttypid::pg_catalog.int4, pg_catalog.format_type(a.atttypid, NULL)
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = ${quoteLiteral(relation)}::pg_catalog.regclass AND a.attnum > 0
      AND NOT a.attisdropped AND a.attgenerated = ''
    ORDER BY a.attnum`;
  const columns: TableColumn[] = [];
  const onRow = ([name, oid, type]: readonly (Buffer | null)[]): void => {
    if (name == null || oid == null) return;
    columns.push({
      name: name.toString("utf8"),
      typeOid: Number(oid.toString("latin1")),
      typeName: type?.toString("utf8") ?? "",
    });
  };
  // Inside a block the block goes on: the COPY's own statements follow on this connection.
  if ((await lookUpInCatalog(session, analysis, mode, sql, onRow, true)) === "failed") return "failed";
  return columns;
}
