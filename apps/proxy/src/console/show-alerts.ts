import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { timestampText } from "./console-text.js";

export const SHOW_ALERTS_COLUMNS = ["name", "subject", "message", "since"] as const;

/**
 * `SHOW ALERTS`: the facts the proxy knows to be wrong now (a backend down, a pool saturated, a
 * two-phase commit not acknowledged everywhere), each once, with the time it became true. No rows
 * when all is well.
 */
export const showAlerts: ConsoleHandler = {
  syntax: "SHOW ALERTS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW ALERTS", argument);
    if (ctx.observed === undefined) return observationsMissing("SHOW ALERTS");
    const rows = ctx.observed
      .alerts()
      .map((alert) => [alert.name, alert.subject, alert.message, timestampText(alert.since)]);
    return showRows(SHOW_ALERTS_COLUMNS, rows);
  },
};
