import type { Analysis, Analyzer, ConsoleCommand, ConsoleCommandName } from "@geo/sql";

/** Console commands the proxy reads itself, beyond those `@geo/sql` recognises. */
export const PROXY_CONSOLE_COMMANDS = ["show-stats", "show-clients"] as const;
export type ProxyConsoleCommandName = (typeof PROXY_CONSOLE_COMMANDS)[number];
export type AnyConsoleCommandName = ConsoleCommandName | ProxyConsoleCommandName;

export interface AnyConsoleCommand {
  readonly command: AnyConsoleCommandName;
  /** Text after the command words, trimmed, without a trailing semicolon. */
  readonly argument: string;
}

const LEADING_COMMENTS = /^(?:\s+|\/\*[\s\S]*?\*\/|--[^\n]*\n?)*/;
/** What may follow a command and still count as nothing: semicolons, spaces, comments. */
const NOTHING = /^(?:[\s;]|\/\*[\s\S]*?\*\/|--[^\n]*(?:\n|$))*$/;
/**
 * Every SHOW the console answers, with whatever follows it. The analyzer reads its own SHOW
 * commands only when nothing follows them; with words after them PostgreSQL's parser would answer
 * a bare syntax error, where the console's handler can name the command and its correct form.
 */
const SHOW_CONSOLE =
  /^show\s+(stats|clients|directory|regions|placement|pools|health|alerts|peers|in\s+doubt)([\s;][\s\S]*)?$/i;

const NAMES: Readonly<Record<string, AnyConsoleCommandName>> = {
  stats: "show-stats",
  clients: "show-clients",
  directory: "show-directory",
  regions: "show-regions",
  placement: "show-placement",
  pools: "show-pools",
  health: "show-health",
  alerts: "show-alerts",
  peers: "show-peers",
  "in doubt": "show-in-doubt",
};

/**
 * Reads `SHOW STATS`, `SHOW CLIENTS` and `SHOW DIRECTORY <limit>`, which PostgreSQL would
 * otherwise be asked about (as a setting named "stats", or a syntax error), and every other
 * console SHOW followed by words, so that its handler refuses them with the command's syntax.
 * Case, leading comments, a trailing semicolon and trailing comments are allowed, as for the
 * other console commands.
 */
export function readProxyConsoleCommand(text: string): AnyConsoleCommand | undefined {
  const c = text.charCodeAt(0) | 32;
  // Nearly every statement starts with a letter other than s: no regex for those.
  const letter = c >= 97 && c <= 122;
  if (letter && c !== 115) return undefined;
  const start = letter ? 0 : (LEADING_COMMENTS.exec(text)?.[0].length ?? 0);
  if ((text.charCodeAt(start) | 32) !== 115) return undefined;
  const match = SHOW_CONSOLE.exec(text.slice(start));
  const name = match?.[1];
  if (match === null || name === undefined) return undefined;
  const command = NAMES[name.toLowerCase().replace(/\s+/, " ")];
  if (command === undefined) return undefined;
  return { command, argument: argumentOf(match[2] ?? "") };
}

/** The words after a command, without a trailing semicolon; none when only comments follow. */
function argumentOf(rest: string): string {
  if (NOTHING.test(rest)) return "";
  const trimmed = rest.trim();
  return (trimmed.endsWith(";") ? trimmed.slice(0, -1) : trimmed).trim();
}

/**
 * Makes `analyzer` see the proxy's own console commands as console statements, so the session
 * answers them as it does the others. Its `analyze` (which `analyzeBatch` uses for a single
 * statement) looks for them first; everything else goes on to the analyzer unchanged.
 *
 * When `@geo/sql` learns these commands, this wrapper has nothing left to do and can go.
 */
export function withProxyConsoleCommands(analyzer: Analyzer): Analyzer {
  const analyze = analyzer.analyze.bind(analyzer);
  const template = analyze("SHOW REGIONS");
  analyzer.analyze = (text: string): Analysis => {
    const command = readProxyConsoleCommand(text);
    return command === undefined ? analyze(text) : consoleAnalysis(template, text, command);
  };
  return analyzer;
}

/**
 * A console statement's analysis for `text`, made from the analyzer's own for another console
 * command: every field a console statement has (no tables, no effects, read-only) is the same.
 * `console` carries the proxy's command; only `runConsoleCommand` reads it, from the text again.
 */
function consoleAnalysis(template: Analysis, text: string, command: AnyConsoleCommand): Analysis {
  return Object.create(template, {
    text: { value: text, enumerable: true },
    console: { value: command as ConsoleCommand, enumerable: true },
    merge: { get: () => template.merge, enumerable: true },
    gather: { get: () => template.gather, enumerable: true },
  }) as Analysis;
}
