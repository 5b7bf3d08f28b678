import { SqlAnalysisError } from "@geo/sql";
import type { ConsoleHandler, ConsoleResult } from "./console-command.js";
import { consoleCommandNotAvailable, notAConsoleCommand } from "./console-errors.js";
import type { ConsoleContext } from "./context.js";
import { drain, undrain } from "./drain.js";
import {
  type AnyConsoleCommand,
  type AnyConsoleCommandName,
  readProxyConsoleCommand,
} from "./proxy-commands.js";
import { rebalance } from "./rebalance.js";
import { relocate } from "./relocate.js";
import { route } from "./route.js";
import { showAlerts } from "./show-alerts.js";
import { showClients } from "./show-clients.js";
import { showDirectory } from "./show-directory.js";
import { showHealth } from "./show-health.js";
import { showInDoubt } from "./show-in-doubt.js";
import { showPlacement } from "./show-placement.js";
import { showPools } from "./show-pools.js";
import { showRegions } from "./show-regions.js";
import { showStats } from "./show-stats.js";
import { whereIs } from "./where-is.js";

export type { ConsoleHandler, ConsoleResult, ConsoleRows } from "./console-command.js";
export type { ConsoleClient, ConsoleContext, ObservedState, RegionPoolStats } from "./context.js";
export {
  type AnyConsoleCommand,
  type AnyConsoleCommandName,
  PROXY_CONSOLE_COMMANDS,
  type ProxyConsoleCommandName,
  readProxyConsoleCommand,
  withProxyConsoleCommands,
} from "./proxy-commands.js";

/** The handler of each command the analyzer recognises; undefined for those not built yet. */
function handlerFor(command: AnyConsoleCommandName): ConsoleHandler | undefined {
  switch (command) {
    case "show-regions":
      return showRegions;
    case "show-placement":
      return showPlacement;
    case "show-pools":
      return showPools;
    case "show-health":
      return showHealth;
    case "show-alerts":
      return showAlerts;
    case "show-stats":
      return showStats;
    case "show-directory":
      return showDirectory;
    case "show-in-doubt":
      return showInDoubt;
    case "show-clients":
      return showClients;
    case "where-is":
      return whereIs;
    case "route":
      return route;
    case "relocate":
      return relocate;
    case "rebalance":
      return rebalance;
    case "drain":
      return drain;
    case "undrain":
      return undrain;
    case "show-peers":
      return undefined;
    default:
      return assertNever(command);
  }
}

function assertNever(value: never): never {
  throw new TypeError(`unhandled console command ${String(value)}`);
}

function readCommand(text: string, ctx: ConsoleContext): AnyConsoleCommand | undefined {
  const own = readProxyConsoleCommand(text);
  if (own !== undefined) return own;
  try {
    return ctx.analyzer.analyze(text).console;
  } catch (error) {
    if (error instanceof SqlAnalysisError) return undefined;
    throw error;
  }
}

/** How every available command is written, in the order the help lists them. */
export const CONSOLE_SYNTAX: readonly string[] = [
  showRegions,
  showPlacement,
  showPools,
  showHealth,
  showAlerts,
  showStats,
  showDirectory,
  showInDoubt,
  showClients,
  whereIs,
  route,
  relocate,
  rebalance,
  drain,
  undrain,
].map((handler) => handler.syntax);

/**
 * Answers one console command (SHOW REGIONS, PLACEMENT, POOLS, HEALTH, ALERTS, STATS, DIRECTORY,
 * IN DOUBT, CLIENTS, WHERE IS, ROUTE, RELOCATE, REBALANCE, DRAIN, UNDRAIN), given
 * its text as the client sent it. The session encodes the answer as RowDescription (text
 * columns) + DataRows + CommandComplete, or sends the error; nothing here touches a region.
 *
 * This is the hand-off point for the console: the session calls only this function.
 *
 * @example
 * ```ts
 * const result = runConsoleCommand("WHERE IS users alice", ctx);
 * // { columns: ["table", "key", "region", "state"], rows: [["users", "alice", "eu-west", "resident"]], tag: "SELECT 1" }
 * ```
 */
export function runConsoleCommand(text: string, ctx: ConsoleContext): ConsoleResult {
  const command = readCommand(text, ctx);
  if (command === undefined) return notAConsoleCommand(text.trim(), CONSOLE_SYNTAX);
  const handler = handlerFor(command.command);
  if (handler === undefined)
    return consoleCommandNotAvailable(command.command.toUpperCase().replaceAll("-", " "), CONSOLE_SYNTAX);
  return handler.run(command.argument, ctx);
}
