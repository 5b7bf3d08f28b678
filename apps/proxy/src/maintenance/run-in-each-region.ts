import type { DistributedWritePlan, EachRegionPlan } from "@geo/core";
import { encodeCommandComplete, encodeNoticeResponse, PgError, Severity, SqlState } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { type LegAnswer, runCollected } from "../distributed/leg-statement.js";
import { runDistributedWrite } from "../distributed/run-distributed-write.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import {
  cannotRunInBlock,
  maintenanceStopped,
  onlyInBlock,
  refuseExtendedMaintenance,
} from "./maintenance-errors.js";

/**
 * A maintenance command in every region its plan names, one region after the other, each on a
 * connection of the region's own and outside any transaction (VACUUM and CREATE INDEX
 * CONCURRENTLY make their own; a two-phase commit around them is impossible). The client sees
 * each region's own notices (VACUUM VERBOSE's INFO lines) followed by a NOTICE naming the region
 * it finished in, then one CommandComplete with the command's own tag. The first region that
 * fails stops the run: its error is passed on with where the command finished and where it did
 * not run, and how to complete it.
 *
 * Inside a transaction block a command PostgreSQL refuses there gets PostgreSQL's own 25001 before
 * any region runs it; the others run in each region as part of the block, as a distributed write.
 */
export async function runInEachRegion(
  session: SessionPort,
  analysis: Analysis,
  plan: EachRegionPlan,
  mode: StatementMode,
): Promise<void> {
  if (session.txn !== null && plan.outsideBlock) {
    session.fail(cannotRunInBlock(plan.command), mode);
    return;
  }
  if (session.txn === null && plan.blockOnly) {
    session.fail(onlyInBlock(plan.command), mode);
    return;
  }
  if (mode.extended) {
    session.fail(refuseExtendedMaintenance(plan.command, plan.regions), mode);
    return;
  }
  if (session.txn !== null) {
    await runDistributedWrite(session, analysis, inTheBlock(plan), mode);
    return;
  }
  await session.settle();
  const finished: string[] = [];
  let tag = "";
  for (const [index, region] of plan.regions.entries()) {
    session.log.debug({ region, sql: plan.sql }, "maintenance");
    const answer = await runInRegion(session, region, plan.sql, mode);
    if (answer.error !== null) {
      const notRun = plan.regions.slice(index + 1);
      const indexName = analysis.maintenance?.index;
      session.relay.error(
        maintenanceStopped(plan.command, region, answer.error, finished, notRun, indexName),
        false,
      );
      if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
      return;
    }
    finished.push(region);
    tag = answer.tag;
    session.relay.local({
      bytes: encodeNoticeResponse(ranInRegion(plan.command, region, finished.length, plan.regions.length)),
    });
  }
  session.relay.local({ bytes: encodeCommandComplete({ tag }) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

/**
 * Runs the command on a connection of `region` (the session's own there when it is pinned to
 * one, else one from the pool with the client's settings) and collects its answer; its notices go
 * to the client as they come (VACUUM VERBOSE of a whole database says a lot, slowly). A cancel of
 * the client's reaches it through the session's cancel hooks, since the relay does not carry it.
 */
async function runInRegion(
  session: SessionPort,
  region: string,
  sql: string,
  mode: StatementMode,
): Promise<LegAnswer> {
  const leg = await session.legFor(region, false, mode);
  if (leg instanceof PgError)
    return { region, description: null, rows: [], notices: [], tag: "", error: leg };
  await session.settle();
  const cancel = (): void => {
    // The connection never goes back to the pool: a late cancel must not hit another client.
    leg.retire = true;
    leg.connection.cancel().catch((error: unknown) => session.log.warn({ err: error }, "cancel failed"));
  };
  session.cancelHooks.add(cancel);
  try {
    return await runCollected(
      leg,
      sql,
      (l) => session.reattach(l),
      (notice) => session.relay.local({ bytes: notice }),
    );
  } finally {
    session.cancelHooks.delete(cancel);
    session.releaseLeg(leg);
  }
}

/** Inside a block: the same statement in each region, on the block's connections, committed with it. */
function inTheBlock(plan: EachRegionPlan): DistributedWritePlan {
  return {
    kind: "distributed-write",
    regions: plan.regions,
    statements: plan.regions.map((region) => ({ region, sql: plan.sql })),
    commit: "two-phase",
  };
}

/** The NOTICE that says a region has run the command (one per region, in the order they ran). */
function ranInRegion(command: string, region: string, done: number, total: number): PgError {
  return new PgError({
    severity: Severity.NOTICE,
    code: SqlState.successful_completion,
    message: `${command} finished in region ${region} (${done} of ${total})`,
  });
}
