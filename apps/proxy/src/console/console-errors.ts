import { PgError, SqlState } from "@geo/proto";

/**
 * The console's own errors, as named factories with real SQLSTATEs and hints that name the fix.
 * Every one is an ordinary ERROR: the session stays usable.
 */

/** How the console's commands are written, for hints. */
export type ConsoleSyntaxList = readonly string[];

function listCommands(commands: ConsoleSyntaxList): string {
  return commands.join("; ");
}

/** A command the analyzer recognises but this geoproxy does not answer (RELOCATE, SHOW HEALTH, ...). */
export function consoleCommandNotAvailable(command: string, commands: ConsoleSyntaxList): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `console command ${command} is not available in this geoproxy`,
    hint: `The console commands are: ${listCommands(commands)}.`,
  });
}

/** Text handed to the console that is no console command at all. */
export function notAConsoleCommand(text: string, commands: ConsoleSyntaxList): PgError {
  return new PgError({
    code: SqlState.syntax_error,
    message: `not a console command: ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`,
    hint: `The console commands are: ${listCommands(commands)}.`,
  });
}

/** A console command written with missing or extra words. */
export function consoleSyntaxError(detail: string, syntax: string, example: string): PgError {
  return new PgError({
    code: SqlState.syntax_error,
    message: `${detail}; the command is written ${syntax}`,
    hint: `For example: ${example}`,
  });
}

/** WHERE IS of a table the placement does not know, with no default placement to fall back on. */
export function unknownConsoleTable(table: string, placedTables: readonly string[]): PgError {
  const known =
    placedTables.length === 0 ? "none is configured" : `placed tables: ${placedTables.join(", ")}`;
  return new PgError({
    code: SqlState.undefined_table,
    message: `table "${table}" has no placement in this geoproxy (${known})`,
    hint: `Check the spelling (SHOW PLACEMENT lists the tables), or add a [[tables]] entry for ${table} with placement = "geo_partitioned", "global_replicated" or "pinned", or set [routing] default_placement.`,
    table,
  });
}

/** A key that is not an integer where `routing.key_type = "integer"`. */
export function invalidIntegerKey(key: string): PgError {
  return new PgError({
    code: SqlState.invalid_text_representation,
    message: `invalid input syntax for type bigint: ${JSON.stringify(key)} (routing.key_type is "integer")`,
    hint: "Give the key as a whole number, for example WHERE IS users 42.",
  });
}

/** A SHOW command that reads the proxy's observations, in a context that has none (unit tests). */
export function observationsMissing(command: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `console command ${command} needs the proxy's observations, which this context does not have`,
    hint: "Run it through a running geoproxy.",
  });
}

/** Words after a SHOW command that takes none. */
export function unexpectedArgument(command: string, argument: string): PgError {
  return consoleSyntaxError(
    `${command} takes no argument, but was given ${JSON.stringify(argument)}`,
    command,
    `${command};`,
  );
}
