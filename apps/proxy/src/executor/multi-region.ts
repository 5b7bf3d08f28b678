import type { DistributedWritePlan, EachRegionPlan, ScatterPlan } from "@geo/core";
import type { Analysis } from "@geo/sql";
import { runDistributedWrite } from "../distributed/run-distributed-write.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { refuseScatterRead } from "../errors/catalog.js";
import { runInEachRegion } from "../maintenance/run-in-each-region.js";
import { runScatterQuery } from "../scatter/run-scatter.js";

/**
 * Statements whose plan spans regions: reads whose answers are combined (scatter-gather),
 * writes committed in two phases, and maintenance run in each region in turn. Both the simple
 * and the extended protocol come here, through `Session.runRouted`, with the statement's
 * analysis, its plan (bound parameters applied) and how its answer is framed.
 */
export async function runMultiRegion(
  session: SessionPort,
  analysis: Analysis,
  plan: ScatterPlan | DistributedWritePlan | EachRegionPlan,
  mode: StatementMode,
): Promise<void> {
  switch (plan.kind) {
    case "scatter":
      // Extended-protocol portals are executed by `ScatterPortal` (Bind records, Execute runs).
      if (mode.extended) {
        session.fail(refuseScatterRead(plan.regions), mode);
        return;
      }
      await runScatterQuery(session, analysis, plan, mode);
      return;
    case "distributed-write":
      await runDistributedWrite(session, analysis, plan, mode);
      return;
    case "each-region":
      await runInEachRegion(session, analysis, plan, mode);
      return;
  }
}
