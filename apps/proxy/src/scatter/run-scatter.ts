import type { ScatterPlan } from "@geo/core";
import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { internalError } from "../errors/catalog.js";
import { rowDescriptionFrame, sendRows } from "./answer-writer.js";
import { AlreadyReported } from "./region-connections.js";
import { NO_PARAMS } from "./region-statement.js";
import { openScatter } from "./scatter-read.js";

/** How a failure of the scatter reaches the client: PostgreSQL's error as sent, or the proxy's. */
export function reportFailure(session: SessionPort, error: unknown, mode: StatementMode): void {
  if (error instanceof AlreadyReported) {
    session.block.fail();
    if (!mode.extended && mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  session.fail(error instanceof PgError ? error : internalError(error), mode);
}

/**
 * A read spanning regions sent as a simple Query (or one statement of one): RowDescription, the
 * combined rows, `SELECT n`, and ReadyForQuery when the statement was the whole Query.
 */
export async function runScatterQuery(
  session: SessionPort,
  analysis: Analysis,
  plan: ScatterPlan,
  mode: StatementMode,
): Promise<void> {
  await session.quiesceActive();
  await session.relay.idle();
  session.log.debug({ regions: plan.regions, tier: plan.merge.tier, sql: analysis.text }, "scatter");
  try {
    const answer = await openScatter(session, { analysis, plan, params: NO_PARAMS, resultFormats: [] }, mode);
    session.relay.local({ bytes: rowDescriptionFrame(answer.fields) });
    try {
      await sendRows(session, answer.rows, 0);
    } catch (error) {
      await answer.rows.close(true);
      throw error;
    }
    await answer.rows.close(false);
    session.runtime.observability.multiRegionRead(answer.finish);
  } catch (error) {
    reportFailure(session, error, mode);
    return;
  }
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}
