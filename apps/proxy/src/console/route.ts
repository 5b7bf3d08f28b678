import { formatPlan } from "@geo/core";
import { PgError } from "@geo/proto";
import { type Analysis, SqlAnalysisError } from "@geo/sql";
import { replicaRouteRow } from "../replicas/route-replica.js";
import { type ConsoleHandler, selectRows } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";

export const ROUTE_COLUMNS = ["field", "value"] as const;

/** One `  label   text` line of the explain layout. */
const EXPLAIN_LINE = /^\s*(\S+)\s+(.*)$/;

function explainRows(text: string): string[][] {
  return text.split("\n").flatMap((line) => {
    const match = EXPLAIN_LINE.exec(line);
    return match === null ? [] : [[match[1]!, match[2]!]];
  });
}

/**
 * `ROUTE <statement>`: where the statement would run and how its answer would be combined, for
 * the live topology and directory, without running it. The rows are @geo/core's explain lines
 * (`kind`, `plan`, `regions`, `finish`, `reason`, `hint`), one field per row. A statement the
 * analyzer cannot read answers with the refusal it would get, not an error: ROUTE reports.
 */
export const route: ConsoleHandler = {
  syntax: "ROUTE <statement>",
  run(argument, ctx) {
    if (argument === "")
      return consoleSyntaxError(
        "ROUTE needs a statement",
        "ROUTE <statement>",
        "ROUTE SELECT * FROM users WHERE tenant_id = 'alice'",
      );
    let analysis: Analysis;
    try {
      analysis = ctx.analyzer.analyze(argument);
    } catch (error) {
      if (!(error instanceof SqlAnalysisError)) throw error;
      const rows = [
        ["plan", `refused [${error.sqlstate}]`],
        ["reason", error.message],
        ...(error.hint === undefined ? [] : [["hint", error.hint]]),
      ];
      return selectRows(ROUTE_COLUMNS, rows);
    }
    const held = ctx.heldExecute?.(analysis) ?? null;
    if (held instanceof PgError) {
      return selectRows(ROUTE_COLUMNS, [
        ["plan", `refused [${held.code}]`],
        ["reason", held.message],
        ...(held.hint === undefined ? [] : [["hint", held.hint]]),
      ]);
    }
    // A held EXECUTE runs as its statement with the arguments written in: route that.
    if (held !== null) analysis = held;
    const plan = ctx.plan(analysis);
    return selectRows(ROUTE_COLUMNS, [
      ...(held === null ? [] : [["executes", held.text]]),
      ...explainRows(formatPlan(analysis, plan)),
      ...replicaRouteRow(analysis, plan, ctx.replicas),
    ]);
  },
};
