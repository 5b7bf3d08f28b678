import { PgError } from "@geo/proto";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";

export const SHOW_DIRECTORY_COLUMNS = ["key", "region"] as const;

/** Keys listed when no limit is given: enough to look, few enough for a directory of millions. */
export const DEFAULT_DIRECTORY_LIMIT = 100;

const SYNTAX = "SHOW DIRECTORY [limit]";
const EXAMPLE = "SHOW DIRECTORY, SHOW DIRECTORY 20, or SHOW DIRECTORY ALL";

function readLimit(argument: string): number | PgError {
  if (argument === "") return DEFAULT_DIRECTORY_LIMIT;
  if (/^all$/i.test(argument)) return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(argument) || Number(argument) < 1) {
    return consoleSyntaxError(
      `SHOW DIRECTORY takes a limit of at least 1 or ALL, not ${JSON.stringify(argument)}`,
      SYNTAX,
      EXAMPLE,
    );
  }
  return Number(argument);
}

/**
 * `SHOW DIRECTORY [limit]`: the keys the directory lists and the region of each, in key order
 * (integer keys by value), the first `limit` (100 when none is given; `ALL` for every one). A key
 * the directory does not list is created at home; `WHERE IS` answers for any single key.
 */
export const showDirectory: ConsoleHandler = {
  syntax: SYNTAX,
  run(argument, ctx) {
    const limit = readLimit(argument);
    if (limit instanceof PgError) return limit;
    const entries = [...ctx.directory.entries()];
    if (ctx.topology.routing.keyType === "integer") {
      entries.sort(([a], [b]) => {
        const left = BigInt(a);
        const right = BigInt(b);
        return left < right ? -1 : left > right ? 1 : 0;
      });
    } else entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const rows = entries.slice(0, Math.min(limit, entries.length)).map(([key, region]) => [key, region]);
    return showRows(SHOW_DIRECTORY_COLUMNS, rows);
  },
};
