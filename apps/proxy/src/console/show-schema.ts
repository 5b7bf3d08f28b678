import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { timestampText } from "./console-text.js";

export const SHOW_SCHEMA_COLUMNS = ["table", "region", "status", "detail", "checked_at"] as const;

/**
 * `SHOW SCHEMA`: whether each region's copy of every geo-partitioned and replicated table has the
 * same columns, in the same order, and the same indexes as the reference region's (home, or the
 * first region that answered), from the last check (at start, then every minute). `differs` and
 * `missing` rows are also `schema_drift` alerts.
 */
export const showSchema: ConsoleHandler = {
  syntax: "SHOW SCHEMA",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW SCHEMA", argument);
    if (ctx.schema === undefined) return observationsMissing("SHOW SCHEMA");
    const report = ctx.schema();
    const checkedAt = report.checkedAt === undefined ? null : timestampText(report.checkedAt);
    const rows = report.rows.map((row) => [row.table, row.region, row.status, row.detail, checkedAt]);
    return showRows(SHOW_SCHEMA_COLUMNS, rows);
  },
};
