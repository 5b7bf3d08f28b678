import { PLAN_KINDS, READ_FINISHES, TRANSACTION_OUTCOMES } from "@geo/admin";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { millisecondsText } from "./console-text.js";

export const SHOW_STATS_COLUMNS = ["kind", "name", "count", "p50_ms", "p95_ms", "p99_ms"] as const;

/**
 * `SHOW STATS`: the counts behind /metrics, one per row, as `kind | name | count`, since the
 * proxy started. `plan` rows carry the latency percentiles of the last statements of that plan
 * kind (NULL before any); `region` rows count statements sent to each region; `left_home` those
 * that ran outside the home region; then how multi-region reads were finished, how transactions
 * ended, and the errors sent to clients by SQLSTATE.
 */
export const showStats: ConsoleHandler = {
  syntax: "SHOW STATS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW STATS", argument);
    const observed = ctx.observed;
    if (observed === undefined) return observationsMissing("SHOW STATS");
    const traffic = observed.traffic();
    const latency = new Map(observed.latency().map((summary) => [summary.plan, summary]));
    const count = (kind: string, name: string, value: number): (string | null)[] => [
      kind,
      name,
      String(value),
      null,
      null,
      null,
    ];
    const rows: (string | null)[][] = [
      count("total", "statements", traffic.statements),
      count("total", "left_home", traffic.leftHome),
    ];
    for (const plan of PLAN_KINDS) {
      const summary = latency.get(plan);
      rows.push([
        "plan",
        plan,
        String(traffic.byPlan[plan]),
        millisecondsText(summary?.p50Ms ?? null),
        millisecondsText(summary?.p95Ms ?? null),
        millisecondsText(summary?.p99Ms ?? null),
      ]);
    }
    for (const region of Object.keys(traffic.byRegion).sort()) {
      rows.push(count("region", region, traffic.byRegion[region] ?? 0));
    }
    for (const finish of READ_FINISHES)
      rows.push(count("read_finish", finish, traffic.multiRegionReads[finish]));
    const outcomes = observed.transactionOutcomes();
    for (const outcome of TRANSACTION_OUTCOMES) rows.push(count("transaction", outcome, outcomes[outcome]));
    for (const code of Object.keys(traffic.errors).sort())
      rows.push(count("error", code, traffic.errors[code] ?? 0));
    return showRows(SHOW_STATS_COLUMNS, rows);
  },
};
