import type { PgError } from "@geo/proto";
import type { ConsoleContext } from "./context.js";

/** A console command's answer: a result set of text columns and its command tag. */
export interface ConsoleRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | null)[])[];
  readonly tag: string;
}

export type ConsoleResult = ConsoleRows | PgError;

/**
 * What answers one console command. Each lives in a file of its own; the registry
 * (`registry.ts`) gives it its words, and `runConsoleCommand` hands it the text after them.
 */
export interface ConsoleHandler {
  /** How the command is written, as the help in errors lists it: `WHERE IS <table> <key>`. */
  readonly syntax: string;
  /** `argument` is the text after the command words, trimmed, without a trailing semicolon. */
  run(argument: string, ctx: ConsoleContext): ConsoleResult;
}

/** A result set whose command tag is `SELECT <rows>`, as PostgreSQL tags a query's rows. */
export function selectRows(
  columns: readonly string[],
  rows: readonly (readonly (string | null)[])[],
): ConsoleRows {
  return { columns, rows, tag: `SELECT ${rows.length}` };
}

/** A result set tagged `SHOW`, as PostgreSQL and PgBouncer tag their SHOW answers. */
export function showRows(
  columns: readonly string[],
  rows: readonly (readonly (string | null)[])[],
): ConsoleRows {
  return { columns, rows, tag: "SHOW" };
}
