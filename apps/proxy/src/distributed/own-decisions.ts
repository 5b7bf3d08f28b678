import type { DecisionLog, DecisionRecord, GidFactory } from "@geo/txn";

/**
 * A decision log seen through one coordinator's prefix. A table log is one table in the home
 * region that every proxy with `decision_log = "table"` writes (and moves share theirs), so its
 * pending decisions are every proxy's. Recovery marks complete each pending decision whose gid it
 * finds prepared nowhere, and it only ever looks for its own gids: given another live proxy's
 * decision, it would mark it complete while that proxy is still committing it, compaction would
 * drop it, and that proxy, restarting, would find its prepared transactions undecided and roll
 * back what it had committed elsewhere. So it is given only decisions of gids it owns.
 *
 * @example
 * const log = ownDecisions(await TableDecisionLog.open({ executor }), new GidFactory("geo_eu1"));
 */
export function ownDecisions(log: DecisionLog, gids: Pick<GidFactory, "owns">): DecisionLog {
  return {
    decide: (record) => log.decide(record),
    complete: (gid) => log.complete(gid),
    lookup: (gid) => log.lookup(gid),
    pending: async (): Promise<DecisionRecord[]> =>
      (await log.pending()).filter((record) => gids.owns(record.gid)),
    compact: () => log.compact(),
    close: () => log.close(),
  };
}
