import type { TablePolicy } from "@geo/core";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { unexpectedArgument } from "./console-errors.js";

export const SHOW_PLACEMENT_COLUMNS = ["table", "placement", "key", "writer", "region", "residency"] as const;

/** What a table that no `[[tables]]` entry names is given, shown as a row of its own. */
export const DEFAULT_PLACEMENT_ROW = "(default)";

function placementRow(policy: TablePolicy): (string | null)[] {
  switch (policy.placement) {
    case "geo_partitioned":
      return [policy.table, policy.placement, policy.key, null, null, policy.residency];
    case "global_replicated":
      return [policy.table, policy.placement, null, policy.writer ?? null, null, policy.residency];
    case "pinned":
      return [policy.table, policy.placement, null, null, policy.region, policy.residency];
  }
}

/**
 * `SHOW PLACEMENT`: each configured table's policy, sorted by name, then the default placement
 * for unlisted tables when `[routing] default_placement` sets one. `writer` is where a replicated
 * table is written (NULL: every copy is written), `region` where a pinned table lives.
 */
export const showPlacement: ConsoleHandler = {
  syntax: "SHOW PLACEMENT",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW PLACEMENT", argument);
    const policies = [...ctx.topology.tables.values()].sort((a, b) =>
      a.table < b.table ? -1 : a.table > b.table ? 1 : 0,
    );
    const rows = policies.map(placementRow);
    const fallback = ctx.topology.routing.defaultPlacement;
    if (fallback !== undefined) {
      switch (fallback.placement) {
        case "global_replicated":
          rows.push([DEFAULT_PLACEMENT_ROW, fallback.placement, null, fallback.writer ?? null, null, "none"]);
          break;
        case "pinned":
          rows.push([DEFAULT_PLACEMENT_ROW, fallback.placement, null, null, fallback.region, "none"]);
          break;
      }
    }
    return showRows(SHOW_PLACEMENT_COLUMNS, rows);
  },
};
