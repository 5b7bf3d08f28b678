import type { PgError } from "@geo/proto";
import { consoleCommandUnavailable } from "../errors/catalog.js";
import type { ConsoleContext } from "./context.js";

export type { ConsoleContext, RegionPoolStats } from "./context.js";

/** A console command's answer: a result set of text columns and its command tag. */
export interface ConsoleRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | null)[])[];
  readonly tag: string;
}

export type ConsoleResult = ConsoleRows | PgError;

/**
 * Answers one console command (SHOW REGIONS, SHOW PLACEMENT, SHOW POOLS, WHERE IS, ROUTE, ...),
 * given its text as the client sent it. The session encodes the answer as RowDescription (text
 * columns) + DataRows + CommandComplete, or sends the error.
 *
 * This is the hand-off point for the console: the session calls only this function.
 */
export function runConsoleCommand(text: string, ctx: ConsoleContext): ConsoleResult {
  const command = ctx.analyzer.analyze(text).console;
  switch (command?.command) {
    case "show-regions":
      return showRegions(ctx);
    default:
      return consoleCommandUnavailable(command?.command ?? text.trim());
  }
}

function showRegions(ctx: ConsoleContext): ConsoleRows {
  const endpoint = (e: { readonly host: string; readonly port: number }): string => `${e.host}:${e.port}`;
  const rows = ctx.topology.regionIds.map((id) => {
    const region = ctx.topology.region(id)!;
    return [
      id,
      region.location,
      region.home ? "yes" : "no",
      endpoint(region.primary),
      region.replicas.map(endpoint).join(", "),
    ];
  });
  return { columns: ["region", "location", "home", "primary", "replicas"], rows, tag: `SHOW ${rows.length}` };
}
