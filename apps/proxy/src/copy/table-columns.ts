import { BackendCode, encodeQuery } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Route } from "../routing/router.js";
import { allValues } from "../scatter/data-row.js";
import { quoteIdent, quoteLiteral } from "../session/settings/quote.js";
import { stateRegion } from "../session/state-region.js";

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
  let failed = false;
  const route: Route = { kind: "region", region: stateRegion(session), readOnly: true, anywhere: false };
  const lookup = { ...analysis, readOnly: true };
  await session.runRouted(lookup, route, mode, (leg) => {
    session.relay.expect({
      leg,
      kind: "query",
      mode: "quiet",
      // Inside a block the block goes on: the COPY's own statements follow on this connection.
      dropReadyForQuery: true,
      inspect: (frame) => {
        if (frame.code !== BackendCode.DataRow) return;
        const [name, oid, type] = allValues(frame.payload);
        if (name == null || oid == null) return;
        columns.push({
          name: name.toString("utf8"),
          typeOid: Number(oid.toString("latin1")),
          typeName: type?.toString("utf8") ?? "",
        });
      },
      done: (unit, status) => {
        failed = unit.failed;
        session.afterReady(leg, status);
      },
    });
    leg.write(encodeQuery({ sql }));
  });
  await session.relay.idle();
  if (failed) {
    if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
    return "failed";
  }
  return columns;
}
