import type { Endpoint } from "@geo/core";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { unexpectedArgument } from "./console-errors.js";
import type { ConsoleContext } from "./context.js";

export const SHOW_REGIONS_COLUMNS = ["region", "home", "location", "primary", "replicas", "health"] as const;

function endpoint(server: Endpoint): string {
  return `${server.host}:${server.port}`;
}

/**
 * Each region's primary health as SHOW HEALTH reports it (`up`, `down`, `unknown`), by region id;
 * empty where nothing observes, so the column is NULL.
 */
function primaryHealth(ctx: ConsoleContext): Map<string, string> {
  const health = new Map<string, string>();
  for (const region of ctx.observed?.regions() ?? []) {
    const primary = region.endpoints.find((e) => e.role === "primary");
    if (primary !== undefined) health.set(region.id, primary.health);
  }
  return health;
}

/** `SHOW REGIONS`: every region of the topology, in id order, with its servers and its primary's health. */
export const showRegions: ConsoleHandler = {
  syntax: "SHOW REGIONS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW REGIONS", argument);
    const health = primaryHealth(ctx);
    const rows = ctx.topology.regionIds.map((id) => {
      const region = ctx.topology.region(id)!;
      return [
        id,
        region.home ? "yes" : "no",
        region.location,
        endpoint(region.primary),
        region.replicas.map(endpoint).join(", "),
        health.get(id) ?? null,
      ];
    });
    return showRows(SHOW_REGIONS_COLUMNS, rows);
  },
};
