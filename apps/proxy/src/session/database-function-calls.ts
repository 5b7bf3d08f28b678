import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { refuseDatabaseFunction } from "../errors/catalog.js";
import { PLACED_BY_ROWS } from "../routing/search-path.js";

/**
 * A statement placed by its rows that calls a function of the database which may read tables is
 * refused when there are several regions, even when its key names one: each region's server would
 * run the function over its own rows only (routing/database-functions.ts). With one region, or a
 * region named by a hint, it runs where its caller said. True when the statement was answered
 * (refused, or 25P02 in a failed block).
 */
export async function refuseDatabaseFunctionCall(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<boolean> {
  const called = analysis.flags.userFunctions;
  if (called.length === 0) return false;
  const router = session.runtime.router;
  if (router.topology.regions.length === 1 || !PLACED_BY_ROWS.has(analysis.kind)) return false;
  if (analysis.hints.region !== undefined) return false;
  if (session.refuseInFailedBlock(analysis, mode)) return true;
  const home = router.topology.home.primary;
  const database = home.fixedDatabase ? home.database : session.database;
  const opaque = await router.functions.firstOpaque(database, session.user, called);
  if (opaque === undefined) return false;
  session.fail(refuseDatabaseFunction(opaque), mode);
  return true;
}
