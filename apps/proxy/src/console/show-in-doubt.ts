import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { timestampText } from "./console-text.js";

export const SHOW_IN_DOUBT_COLUMNS = ["gid", "decision", "regions", "pending", "decided_at"] as const;

/**
 * `SHOW IN DOUBT`: two-phase commits whose decision is made but not yet carried out in every
 * region, oldest first. `pending` lists the regions that have not acknowledged it; recovery
 * finishes them. No rows when every commit is settled.
 */
export const showInDoubt: ConsoleHandler = {
  syntax: "SHOW IN DOUBT",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW IN DOUBT", argument);
    if (ctx.observed === undefined) return observationsMissing("SHOW IN DOUBT");
    const rows = ctx.observed
      .inDoubt()
      .map((txn) => [
        txn.gid,
        txn.decision,
        txn.regions.join(", "),
        txn.pending.join(", "),
        timestampText(txn.decidedAt),
      ]);
    return showRows(SHOW_IN_DOUBT_COLUMNS, rows);
  },
};
