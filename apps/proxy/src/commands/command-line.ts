import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";

/** One option of a subcommand, as `--help` lists it and `parseArgs` reads it. */
export interface CliOption {
  /** The long name, without the dashes: `config` for `--config`. */
  readonly name: string;
  readonly short?: string;
  /** What the value stands for, as the help writes it (`<file>`); absent for a flag. */
  readonly value?: string;
  /** May be given more than once; the values are kept in order. */
  readonly multiple?: boolean;
  readonly description: string;
  /** The default in words, when the option has one. */
  readonly default?: string;
}

/** What `parseArgs` read for a subcommand: option values by long name, and the positionals. */
export interface CommandLine {
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
}

/** A subcommand of `geoproxy`: its help and what it does. */
export interface CliCommand {
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The usage line, after `geoproxy <name> `. */
  readonly usage: string;
  /** What the command does, in a sentence or two. */
  readonly description: string;
  readonly options: readonly CliOption[];
  readonly examples: readonly string[];
  /** Runs the command; resolves to the exit status, or -1 for a command that keeps running. */
  run(line: CommandLine): Promise<number>;
}

/** A mistake on the command line: printed with the command's usage, exit status 64 (EX_USAGE). */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The subcommand whose usage to print; undefined for the top level. */
  readonly command: CliCommand | undefined;

  constructor(message: string, command?: CliCommand) {
    super(message);
    this.command = command;
  }
}

/** Every subcommand takes `--help`, so none lists it itself. */
const HELP: CliOption = { name: "help", short: "h", description: "print this help and exit" };

function optionsOf(command: CliCommand): readonly CliOption[] {
  return [...command.options, HELP];
}

function parseArgsOptions(command: CliCommand): NonNullable<ParseArgsConfig["options"]> {
  return Object.fromEntries(
    optionsOf(command).map((option) => [
      option.name,
      {
        type: option.value === undefined ? ("boolean" as const) : ("string" as const),
        ...(option.short === undefined ? {} : { short: option.short }),
        ...(option.multiple === true ? { multiple: true } : {}),
      },
    ]),
  );
}

/**
 * Reads a subcommand's arguments with `node:util` `parseArgs`, strictly: an unknown option, a
 * missing value or a value given to a flag is a `UsageError` naming the option.
 */
export function readCommandLine(command: CliCommand, args: readonly string[]): CommandLine {
  const parsed = strictParse(command, args);
  // parseArgs keeps the last of a repeated option; a second --config is more likely a slip.
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option" || command.options.some((o) => o.name === token.name && o.multiple === true))
      continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`, command);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

function strictParse(command: CliCommand, args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      options: parseArgsOptions(command),
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    if (!isParseArgsError(error)) throw error;
    throw new UsageError(describeMistake(command, args) ?? error.message, command);
  }
}

function isParseArgsError(error: unknown): error is Error {
  return error instanceof Error && String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_");
}

/**
 * Node's own messages are long and name no command; the tokens of a lenient parse show which
 * option was wrong and how.
 */
function describeMistake(command: CliCommand, args: readonly string[]): string | undefined {
  const { tokens } = parseArgs({
    args: [...args],
    options: parseArgsOptions(command),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const known = new Map(optionsOf(command).map((option) => [option.name, option]));
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = known.get(token.name);
    if (option === undefined) return `unknown option ${token.rawName} for geoproxy ${command.name}`;
    const needsValue = option.value !== undefined;
    const missing = token.value === undefined || (!token.inlineValue && token.value.startsWith("-"));
    if (needsValue && missing) return `${token.rawName} needs a value: ${token.rawName} ${option.value}`;
    if (!needsValue && token.value !== undefined) return `${token.rawName} takes no value`;
  }
  return undefined;
}

/** The value of a single-valued string option. */
export function stringOption(line: CommandLine, name: string): string | undefined {
  const value = line.values[name];
  return typeof value === "string" ? value : undefined;
}

/** Whether a flag was given. */
export function flagOption(line: CommandLine, name: string): boolean {
  return line.values[name] === true;
}

/** The values of a repeatable string option, in order. */
export function stringsOption(line: CommandLine, name: string): string[] {
  const value = line.values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** The configuration file looked for when `--config` is not given. */
export const DEFAULT_CONFIG_FILE = "geoproxy.toml";

/**
 * The configuration a command reads: the one named on the command line, else `geoproxy.toml` in
 * the working folder when there is one.
 */
export function configPath(command: CliCommand, given: string | undefined, cwd = process.cwd()): string {
  if (given !== undefined) return given;
  const fallback = resolve(cwd, DEFAULT_CONFIG_FILE);
  if (existsSync(fallback)) return fallback;
  throw new UsageError(
    `${command.name} needs --config <file>: there is no ${DEFAULT_CONFIG_FILE} in ${cwd}`,
    command,
  );
}

/** The usage line of a subcommand, as errors print it. */
export function usageLine(command: CliCommand): string {
  return `usage: geoproxy ${command.name} ${command.usage}`;
}

/** Help text is wrapped to this many columns, so it reads in an ordinary terminal. */
const HELP_WIDTH = 100;

/** `text` broken at spaces into lines of at most `width` characters (a longer word stays whole). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** `geoproxy <command> --help`: the usage line, what it does, every option with its default, examples. */
export function commandHelp(command: CliCommand): string {
  const options = optionsOf(command).map((option) => {
    const names = `${option.short === undefined ? "    " : `-${option.short}, `}--${option.name}`;
    return { left: option.value === undefined ? names : `${names} ${option.value}`, option };
  });
  const width = Math.max(...options.map((entry) => entry.left.length));
  const lines = [usageLine(command), "", ...wrap(command.description, HELP_WIDTH), "", "options:"];
  for (const { left, option } of options) {
    const repeat = option.multiple === true ? " (repeatable)" : "";
    const fallback = option.default === undefined ? "" : ` (default: ${option.default})`;
    const indent = 2 + width + 2;
    const [first = "", ...more] = wrap(`${option.description}${repeat}${fallback}`, HELP_WIDTH - indent);
    lines.push(`  ${left.padEnd(width)}  ${first}`, ...more.map((text) => `${" ".repeat(indent)}${text}`));
  }
  lines.push("", "examples:", ...command.examples.map((example) => `  ${example}`));
  return lines.join("\n");
}
