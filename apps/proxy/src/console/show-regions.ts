import type { Endpoint } from "@geo/core";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { unexpectedArgument } from "./console-errors.js";

export const SHOW_REGIONS_COLUMNS = ["region", "home", "location", "primary", "replicas"] as const;

function endpoint(server: Endpoint): string {
  return `${server.host}:${server.port}`;
}

/** `SHOW REGIONS`: every region of the topology, in id order, with its servers. */
export const showRegions: ConsoleHandler = {
  syntax: "SHOW REGIONS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW REGIONS", argument);
    const rows = ctx.topology.regionIds.map((id) => {
      const region = ctx.topology.region(id)!;
      return [
        id,
        region.home ? "yes" : "no",
        region.location,
        endpoint(region.primary),
        region.replicas.map(endpoint).join(", "),
      ];
    });
    return showRows(SHOW_REGIONS_COLUMNS, rows);
  },
};
