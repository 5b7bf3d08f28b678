import { BackendCode, encodeQuery, PgError } from "@geo/proto";
import { type Analysis, qualifyTables } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Route } from "../routing/router.js";
import { PLACED_BY_ROWS, shadowsPublic, unqualifiedNames } from "../routing/search-path.js";
import { allValues } from "../scatter/data-row.js";
import { quoteIdent, quoteLiteral } from "./settings/quote.js";
import { stateRegion } from "./state-region.js";

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
  const qualified = session.runtime.router.analyze(qualifyTables(analysis.text, (name) => schemas.get(name)));
  return qualified instanceof PgError ? null : qualified;
}

/**
 * The unqualified names of a statement that the session's search_path may resolve to a schema
 * other than public (empty when it cannot): a batch holding one is run a statement at a time.
 */
export function namesToResolve(session: SessionPort, analysis: Analysis): string[] {
  const searchPath = session.searchPath();
  if (searchPath === undefined || !PLACED_BY_ROWS.has(analysis.kind) || !shadowsPublic(searchPath)) return [];
  // With one region every name is read there, whichever table it is.
  if (session.runtime.router.topology.regions.length === 1) return [];
  return unqualifiedNames(analysis.tables);
}

/** Each name's schema under the session's search_path; a name no schema holds is left out. */
async function lookUpSchemas(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  names: readonly string[],
): Promise<Map<string, string> | "failed"> {
  const list = names.map((name) => quoteLiteral(quoteIdent(name))).join(", ");
  // A temporary table's schema is named per backend (pg_temp_3); pg_temp names it anywhere.
  const sql = `SELECT x.name, CASE WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 'pg_temp' ELSE n.nspname END
    FROM pg_catalog.unnest(ARRAY[${list}]::pg_catalog.text[]) WITH ORDINALITY AS x(name, i)
    JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(x.name)
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    ORDER BY x.i`;
  const found = new Map<string, string>();
  let failed = false;
  const route: Route = { kind: "region", region: stateRegion(session), readOnly: true, anywhere: false };
  // A catalog read: whatever the statement does, the lookup only reads.
  await session.runRouted({ ...analysis, readOnly: true }, route, mode, (leg) => {
    session.relay.expect({
      leg,
      kind: "query",
      mode: "quiet",
      inspect: (frame) => {
        if (frame.code !== BackendCode.DataRow) return;
        const [quoted, schema] = allValues(frame.payload);
        if (quoted === null || quoted === undefined || schema === null || schema === undefined) return;
        const index = names.findIndex((name) => quoteIdent(name) === quoted.toString("utf8"));
        if (index >= 0) found.set(names[index]!, schema.toString("utf8"));
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
  return found;
}
