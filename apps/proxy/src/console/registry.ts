import type { ConsoleHandler } from "./console-command.js";
import { drain, undrain } from "./drain.js";
import { rebalance } from "./rebalance.js";
import { relocate } from "./relocate.js";
import { restripe } from "./restripe.js";
import { route } from "./route.js";
import { showAlerts } from "./show-alerts.js";
import { showClients } from "./show-clients.js";
import { showDirectory } from "./show-directory.js";
import { showHealth } from "./show-health.js";
import { showInDoubt } from "./show-in-doubt.js";
import { showPeers } from "./show-peers.js";
import { showPlacement } from "./show-placement.js";
import { showPools } from "./show-pools.js";
import { showRegions } from "./show-regions.js";
import { showSchema } from "./show-schema.js";
import { showStats } from "./show-stats.js";
import { whereIs } from "./where-is.js";

/** One console command: how it is written, what answers it, and whether it may share a query. */
export interface ConsoleCommandEntry {
  /** The words that start it, in capitals, one space apart: `SHOW IN DOUBT`. */
  readonly words: string;
  /**
   * Its name in the analysis (`Analysis.console.command`): the words in lower case joined by `-`,
   * as `@geo/sql` writes a name back in its errors.
   */
  readonly name: string;
  /**
   * Moves rows or changes where reads go. Refused in a multi-statement query, whose implicit
   * transaction could not undo it along with the statements around it.
   */
  readonly changesProxyState: boolean;
  /** What answers it; undefined for a command the console reads but this geoproxy does not answer. */
  readonly handler: ConsoleHandler | undefined;
}

function entry(
  words: string,
  handler: ConsoleHandler | undefined,
  effect: "reports" | "changes proxy state" = "reports",
): ConsoleCommandEntry {
  return {
    words,
    name: words.toLowerCase().replaceAll(" ", "-"),
    changesProxyState: effect === "changes proxy state",
    handler,
  };
}

/**
 * Every console command, in the order the help lists them. The analyzer's console reader and
 * `runConsoleCommand` are both built from this list, so a command is recognised exactly where it
 * is answered.
 */
export const CONSOLE_REGISTRY: readonly ConsoleCommandEntry[] = [
  entry("SHOW REGIONS", showRegions),
  entry("SHOW PLACEMENT", showPlacement),
  entry("SHOW SCHEMA", showSchema),
  entry("SHOW POOLS", showPools),
  entry("SHOW HEALTH", showHealth),
  entry("SHOW ALERTS", showAlerts),
  entry("SHOW STATS", showStats),
  entry("SHOW DIRECTORY", showDirectory),
  entry("SHOW IN DOUBT", showInDoubt),
  entry("SHOW CLIENTS", showClients),
  entry("SHOW PEERS", showPeers),
  entry("WHERE IS", whereIs),
  entry("ROUTE", route),
  entry("RELOCATE", relocate, "changes proxy state"),
  entry("REBALANCE", rebalance, "changes proxy state"),
  entry("DRAIN", drain, "changes proxy state"),
  entry("UNDRAIN", undrain, "changes proxy state"),
  entry("RESTRIPE", restripe, "changes proxy state"),
];
