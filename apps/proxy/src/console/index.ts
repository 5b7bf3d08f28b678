import type { ConsoleResult } from "./console-command.js";
import { consoleCommandNotAvailable, notAConsoleCommand } from "./console-errors.js";
import { findConsoleCommand } from "./console-reader.js";
import type { ConsoleContext } from "./context.js";
import { CONSOLE_REGISTRY } from "./registry.js";

export type { ConsoleHandler, ConsoleResult, ConsoleRows } from "./console-command.js";
export { type FoundConsoleCommand, findConsoleCommand, proxyConsoleReader } from "./console-reader.js";
export type { ConsoleClient, ConsoleContext, ObservedState, RegionPoolStats } from "./context.js";
export { CONSOLE_REGISTRY, type ConsoleCommandEntry } from "./registry.js";

/** How every available command is written, in the order the help lists them. */
export const CONSOLE_SYNTAX: readonly string[] = CONSOLE_REGISTRY.flatMap((entry) =>
  entry.handler === undefined ? [] : [entry.handler.syntax],
);

/**
 * Answers one console command (SHOW REGIONS, PLACEMENT, POOLS, HEALTH, ALERTS, STATS, DIRECTORY,
 * IN DOUBT, CLIENTS, WHERE IS, ROUTE, RELOCATE, REBALANCE, DRAIN, UNDRAIN), given
 * its text as the client sent it. The session encodes the answer as RowDescription (text
 * columns) + DataRows + CommandComplete, or sends the error; nothing here touches a region.
 *
 * This is the hand-off point for the console: the session calls only this function. The command
 * is read from the registry the analyzer's console reader was built from, so whatever the analysis
 * called a console statement is found here again.
 *
 * @example
 * ```ts
 * const result = runConsoleCommand("WHERE IS users alice", ctx);
 * // { columns: ["table", "key", "region", "state"], rows: [["users", "alice", "eu-west", "resident"]], tag: "SELECT 1" }
 * ```
 */
export function runConsoleCommand(text: string, ctx: ConsoleContext): ConsoleResult {
  const found = findConsoleCommand(text);
  if (found === undefined) return notAConsoleCommand(text.trim(), CONSOLE_SYNTAX);
  const { handler, words } = found.entry;
  if (handler === undefined) return consoleCommandNotAvailable(words, CONSOLE_SYNTAX);
  return handler.run(found.argument, ctx);
}
