import { PgError, SqlState } from "@geo/proto";
import { noDirectoryStore } from "../moves/move-errors.js";
import type { ConsoleHandler } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";

export const MOVE_COLUMNS = ["table", "from", "to", "rows", "state"] as const;

const SYNTAX = "RELOCATE <key>[, <key> ...] TO '<region>'";
const EXAMPLE = "RELOCATE alice, 'bob smith' TO 'us-east'";

export interface RelocateRequest {
  readonly keys: readonly string[];
  readonly to: string;
}

/**
 * Reads one word or quoted string at `at` (after spaces): `'it''s'` is `it's`; a bare word ends
 * at a space or a comma.
 */
export function readWord(text: string, at: number): { value: string; end: number } | undefined {
  let index = at;
  while (index < text.length && /\s/.test(text[index]!)) index++;
  if (index >= text.length) return undefined;
  if (text[index] === "'") {
    let value = "";
    index++;
    while (index < text.length) {
      if (text[index] === "'") {
        if (text[index + 1] === "'") {
          value += "'";
          index += 2;
          continue;
        }
        return { value, end: index + 1 };
      }
      value += text[index];
      index++;
    }
    return undefined;
  }
  const start = index;
  while (index < text.length && !/[\s,]/.test(text[index]!)) index++;
  return { value: text.slice(start, index), end: index };
}

/** Parses what follows RELOCATE. */
export function parseRelocate(argument: string): RelocateRequest | PgError {
  const keys: string[] = [];
  let at = 0;
  for (;;) {
    const word = readWord(argument, at);
    if (word === undefined || word.value === "")
      return consoleSyntaxError("RELOCATE needs a key", SYNTAX, EXAMPLE);
    keys.push(word.value);
    at = word.end;
    while (at < argument.length && /\s/.test(argument[at]!)) at++;
    if (argument[at] === ",") {
      at++;
      continue;
    }
    break;
  }
  const rest = argument.slice(at);
  const to = /^to\b/i.exec(rest);
  if (to === null) return consoleSyntaxError("RELOCATE needs TO '<region>' after its keys", SYNTAX, EXAMPLE);
  const region = readWord(rest, to[0].length);
  if (region === undefined || region.value === "" || rest.slice(region.end).trim() !== "")
    return consoleSyntaxError("RELOCATE needs one region after TO", SYNTAX, EXAMPLE);
  return { keys, to: region.value };
}

/** A move command reached by a path that cannot run it (the extended protocol). */
export function moveNeedsSimpleQuery(command: string): PgError {
  return new PgError({
    code: SqlState.feature_not_supported,
    message: `${command} runs only as a simple query`,
    hint: `Send it as a plain query (psql does), not as a prepared statement.`,
  });
}

/**
 * `RELOCATE <key>[, <key> ...] TO '<region>'`: operators only. The session runs it (it talks to
 * every region, see `moves/`); here it is read, and refused where it cannot run.
 */
export const relocate: ConsoleHandler = {
  syntax: SYNTAX,
  run(argument, ctx) {
    const request = parseRelocate(argument);
    if (request instanceof PgError) return request;
    return ctx.config.directoryStore === undefined
      ? noDirectoryStore("RELOCATE")
      : moveNeedsSimpleQuery("RELOCATE");
  },
};
