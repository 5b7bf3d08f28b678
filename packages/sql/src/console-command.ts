import type { ConsoleCommand, ConsoleCommandName } from "./analysis.js";

const SHOW_TARGETS: Readonly<Record<string, ConsoleCommandName>> = {
  regions: "show-regions",
  placement: "show-placement",
  pools: "show-pools",
  directory: "show-directory",
  "in doubt": "show-in-doubt",
  health: "show-health",
  alerts: "show-alerts",
  peers: "show-peers",
};

const VERBS: Readonly<Record<string, ConsoleCommandName>> = {
  route: "route",
  relocate: "relocate",
  rebalance: "rebalance",
  drain: "drain",
  undrain: "undrain",
};

const LEADING_COMMENTS = /^(?:\s+|\/\*[\s\S]*?\*\/|--[^\n]*\n?)*/;
const SHOW = /^show\s+(regions|placement|pools|directory|in\s+doubt|health|alerts|peers)\s*;?\s*$/i;
const WHERE_IS = /^where\s+is\b([\s\S]*)$/i;
const VERB = /^(route|relocate|rebalance|drain|undrain)\b([\s\S]*)$/i;

/**
 * Recognises the proxy's own console commands. They are checked before PostgreSQL's parser sees the
 * text: `SHOW REGIONS` would otherwise parse as showing a setting called "regions".
 */
export function readConsoleCommand(text: string): ConsoleCommand | undefined {
  const c = text.charCodeAt(0);
  // Most statements start with a letter: only whitespace or a comment needs the regex.
  const start = (c | 32) >= 97 && (c | 32) <= 122 ? 0 : (LEADING_COMMENTS.exec(text)?.[0].length ?? 0);
  const first = text.charCodeAt(start) | 32;
  // s(how) w(here) r(oute/elocate/ebalance) d(rain) u(ndrain)
  if (first !== 115 && first !== 119 && first !== 114 && first !== 100 && first !== 117) return undefined;
  const body = text.slice(start);
  const show = SHOW.exec(body);
  if (show?.[1] !== undefined) {
    const target = show[1].toLowerCase().replace(/\s+/, " ");
    const command = SHOW_TARGETS[target];
    return command === undefined ? undefined : { command, argument: "" };
  }
  const whereIs = WHERE_IS.exec(body);
  if (whereIs !== null) return { command: "where-is", argument: trimArgument(whereIs[1] ?? "") };
  const verb = VERB.exec(body);
  if (verb?.[1] !== undefined) {
    const command = VERBS[verb[1].toLowerCase()];
    if (command !== undefined) return { command, argument: trimArgument(verb[2] ?? "") };
  }
  return undefined;
}

function trimArgument(text: string): string {
  const trimmed = text.trim();
  return trimmed.endsWith(";") ? trimmed.slice(0, -1).trimEnd() : trimmed;
}

/** Commands that change what the proxy does (placement, drains): never part of a batch. */
export const CHANGES_PROXY_STATE: ReadonlySet<ConsoleCommandName> = new Set<ConsoleCommandName>([
  "relocate",
  "rebalance",
  "drain",
  "undrain",
]);

/** Any SHOW counts: an embedding may add console commands of its own (SHOW STATS, SHOW CLIENTS). */
const CONSOLE_WORDS = /\b(?:show|where\s+is|route|relocate|rebalance|drain|undrain)\b/i;

/** A cheap first look at a batch: only one that names a console command's words is split to find it. */
export function mayHoldConsoleCommand(text: string): boolean {
  return CONSOLE_WORDS.test(text);
}
