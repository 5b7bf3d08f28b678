import { type ConsoleHandler, showRows } from "./console-command.js";
import { observationsMissing, unexpectedArgument } from "./console-errors.js";
import { yesNo } from "./console-text.js";

export const SHOW_HEALTH_COLUMNS = [
  "region",
  "home",
  "role",
  "endpoint",
  "health",
  "in_recovery",
  "lag_bytes",
  "drained",
] as const;

/**
 * `SHOW HEALTH`: every backend of the topology, region by region, primary first, with its health
 * as the proxy last saw it (`up`, `down` or `unknown`). `in_recovery` and `lag_bytes` are NULL
 * until a probe has read them.
 */
export const showHealth: ConsoleHandler = {
  syntax: "SHOW HEALTH",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW HEALTH", argument);
    if (ctx.observed === undefined) return observationsMissing("SHOW HEALTH");
    const rows = ctx.observed
      .regions()
      .flatMap((region) =>
        region.endpoints.map((endpoint) => [
          region.id,
          yesNo(region.home),
          endpoint.role,
          endpoint.endpoint,
          endpoint.health,
          endpoint.inRecovery === null ? null : yesNo(endpoint.inRecovery),
          endpoint.lagBytes === null ? null : String(endpoint.lagBytes),
          yesNo(endpoint.drained),
        ]),
      );
    return showRows(SHOW_HEALTH_COLUMNS, rows);
  },
};
