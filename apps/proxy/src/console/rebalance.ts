import { PgError } from "@geo/proto";
import { noDirectoryStore } from "../moves/move-errors.js";
import type { ConsoleHandler } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";
import { moveNeedsSimpleQuery, readWord } from "./relocate.js";

const SYNTAX = "REBALANCE <region> TO <region> LIMIT <n> [BATCH <m>]";
const EXAMPLE = "REBALANCE eu-west TO eu-west-2 LIMIT 100 BATCH 25";

export interface RebalanceRequest {
  readonly from: string;
  readonly to: string;
  readonly limit: number;
  /** Absent: [directory_store] batch. */
  readonly batch: number | undefined;
}

const TAIL = /^\s*limit\s+(\d+)(?:\s+batch\s+(\d+))?\s*$/i;

/** Parses what follows REBALANCE. */
export function parseRebalance(argument: string): RebalanceRequest | PgError {
  const from = readWord(argument, 0);
  if (from === undefined || from.value === "")
    return consoleSyntaxError("REBALANCE needs the region to move keys from", SYNTAX, EXAMPLE);
  const rest = argument.slice(from.end);
  const to = /^\s*to\b/i.exec(rest);
  if (to === null) return consoleSyntaxError("REBALANCE needs TO <region>", SYNTAX, EXAMPLE);
  const target = readWord(rest, to[0].length);
  if (target === undefined || target.value === "")
    return consoleSyntaxError("REBALANCE needs a region after TO", SYNTAX, EXAMPLE);
  const tail = TAIL.exec(rest.slice(target.end));
  if (tail === null)
    return consoleSyntaxError("REBALANCE needs LIMIT <n>, then optionally BATCH <m>", SYNTAX, EXAMPLE);
  const limit = Number(tail[1]);
  const batch = tail[2] === undefined ? undefined : Number(tail[2]);
  if (limit < 1 || (batch !== undefined && batch < 1))
    return consoleSyntaxError("LIMIT and BATCH must be at least 1", SYNTAX, EXAMPLE);
  return { from: from.value, to: target.value, limit, batch };
}

/** `REBALANCE <region> TO <region> LIMIT n [BATCH m]`: operators only; the session runs it. */
export const rebalance: ConsoleHandler = {
  syntax: SYNTAX,
  run(argument, ctx) {
    const request = parseRebalance(argument);
    if (request instanceof PgError) return request;
    return ctx.config.directoryStore === undefined
      ? noDirectoryStore("REBALANCE")
      : moveNeedsSimpleQuery("REBALANCE");
  },
};
