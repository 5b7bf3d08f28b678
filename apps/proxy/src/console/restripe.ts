import type { TablePolicy, Topology } from "@geo/core";
import { PgError } from "@geo/proto";
import { restripeNeedsStripedTable } from "../ids/restripe-errors.js";
import type { ConsoleHandler } from "./console-command.js";
import { consoleSyntaxError } from "./console-errors.js";
import { moveNeedsSimpleQuery } from "./relocate.js";

const SYNTAX = "RESTRIPE <table>";
const EXAMPLE = "RESTRIPE tickets";

/**
 * The configured table RESTRIPE names, as written in [[tables]] (`tickets`, `app.tickets`), if it
 * is geo-partitioned with striped ids; otherwise why not.
 */
export function restripeTable(argument: string, topology: Topology): TablePolicy | PgError {
  const name = argument.trim();
  if (name === "" || /\s/.test(name)) return consoleSyntaxError("RESTRIPE needs one table", SYNTAX, EXAMPLE);
  const policy = topology.tables.get(name) ?? topology.tables.get(name.toLowerCase());
  if (policy?.placement !== "geo_partitioned" || policy.ids !== "striped")
    return restripeNeedsStripedTable(name, policy?.placement);
  return policy;
}

/**
 * `RESTRIPE <table>`: operators only. The session runs it (it holds every region's sequences of
 * the table, see `ids/`); here it is read, and refused where it cannot run.
 */
export const restripe: ConsoleHandler = {
  syntax: SYNTAX,
  run(argument, ctx) {
    const table = restripeTable(argument, ctx.topology);
    return table instanceof PgError ? table : moveNeedsSimpleQuery("RESTRIPE");
  },
};
