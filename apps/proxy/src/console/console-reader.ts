import type { ConsoleCommand, ConsoleReader } from "@geo/sql";
import { CONSOLE_REGISTRY, type ConsoleCommandEntry } from "./registry.js";

/** A console command found in a statement's text. */
export interface FoundConsoleCommand {
  readonly entry: ConsoleCommandEntry;
  /** The text after the command words, trimmed, without a trailing semicolon; empty for only comments. */
  readonly argument: string;
}

const LEADING_COMMENTS = /^(?:\s+|\/\*[\s\S]*?\*\/|--[^\n]*\n?)*/;
/** What may follow a command and still count as nothing: semicolons, spaces, comments. */
const NOTHING = /^(?:[\s;]|\/\*[\s\S]*?\*\/|--[^\n]*(?:\n|$))*$/;

/** `SHOW IN DOUBT` as a pattern: any run of spaces between the words, longest commands first. */
const WORDS = [...CONSOLE_REGISTRY]
  .sort((a, b) => b.words.length - a.words.length)
  .map((entry) => entry.words.toLowerCase().split(" ").join("\\s+"))
  .join("|");
/**
 * The command words end where a name could not go on: `SHOW regions.x` is PostgreSQL's SHOW of a
 * custom setting, `ROUTES` no command at all. Anything else after them is the argument, which the
 * handler reads (and refuses, for a command that takes none).
 */
const END_OF_WORDS = "(?![\\w$.])";
/** Sticky: matched at the end of the leading comments, without slicing the text. */
const COMMAND = new RegExp(`(${WORDS})${END_OF_WORDS}`, "iy");
const MENTION = new RegExp(`\\b(?:${WORDS})${END_OF_WORDS}`, "i");

const BY_WORDS: ReadonlyMap<string, ConsoleCommandEntry> = new Map(
  CONSOLE_REGISTRY.map((entry) => [entry.words.toLowerCase(), entry]),
);

/** Lower-case first letters of the commands: a statement starting with any other letter is SQL. */
const FIRST_LETTERS = new Set(CONSOLE_REGISTRY.map((entry) => entry.words.toLowerCase().charCodeAt(0)));

/**
 * The console command `text` is, if any: its words in any case and spacing, after any leading
 * comments, followed by nothing, a semicolon, comments or an argument.
 *
 * @example
 * findConsoleCommand("/* ops *\/ show in  doubt;")?.entry.name; // "show-in-doubt"
 * findConsoleCommand("WHERE IS users alice")?.argument; // "users alice"
 * findConsoleCommand("SHOW search_path"); // undefined
 */
export function findConsoleCommand(text: string): FoundConsoleCommand | undefined {
  const c = text.charCodeAt(0) | 32;
  // Nearly every statement starts with a letter: only whitespace or a comment needs the regex.
  const letter = c >= 97 && c <= 122;
  if (letter && !FIRST_LETTERS.has(c)) return undefined;
  const start = letter ? 0 : (LEADING_COMMENTS.exec(text)?.[0].length ?? 0);
  if (!letter && !FIRST_LETTERS.has(text.charCodeAt(start) | 32)) return undefined;
  COMMAND.lastIndex = start;
  const match = COMMAND.exec(text);
  const words = match?.[1];
  if (match === null || words === undefined) return undefined;
  const entry = BY_WORDS.get(words.toLowerCase().replace(/\s+/g, " "));
  if (entry === undefined) return undefined;
  return { entry, argument: argumentOf(text.slice(COMMAND.lastIndex)) };
}

function argumentOf(rest: string): string {
  if (NOTHING.test(rest)) return "";
  const trimmed = rest.trim();
  return (trimmed.endsWith(";") ? trimmed.slice(0, -1) : trimmed).trim();
}

/**
 * The console as `@geo/sql` sees it (`AnalyzerOptions.console`): every analyzer of the proxy, and
 * every tool that should see statements as the proxy does, is built with it.
 */
export const proxyConsoleReader: ConsoleReader = {
  read(text: string): ConsoleCommand | undefined {
    const found = findConsoleCommand(text);
    if (found === undefined) return undefined;
    return {
      command: found.entry.name,
      argument: found.argument,
      changesProxyState: found.entry.changesProxyState,
    };
  },
  mayHold: (text: string): boolean => MENTION.test(text),
};
