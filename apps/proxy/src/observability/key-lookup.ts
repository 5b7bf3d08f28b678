import type { KeyLocation, KeyLookupFailure } from "@geo/admin";
import { PgError, SqlState } from "@geo/proto";
import type { ConsoleContext } from "../console/context.js";
import { type WhereIsState, whereIs } from "../console/where-is.js";

/** A key as a string literal, so WHERE IS reads it whole whatever it holds. */
function literal(key: string): string {
  return `'${key.replaceAll("'", "''")}'`;
}

/**
 * `/key/<table>/<key>` through the console's WHERE IS, so the admin port and the console can never
 * disagree: the same table resolution, key checks and errors (with their SQLSTATEs and hints).
 * A key listed in the directory is `resident`; one with no entry is `unlisted` and answered with
 * the region it would be created in. Replicated and pinned tables are not placed by key: their
 * answer is a 400 saying so (WHERE IS in the console shows where their rows are).
 */
export function lookUpKey(table: string, key: string, ctx: ConsoleContext): KeyLocation | KeyLookupFailure {
  const answer = whereIs.run(`${table} ${literal(key)}`, ctx);
  if (answer instanceof PgError) {
    return {
      error: answer.message,
      sqlstate: answer.code,
      ...(answer.hint === undefined ? {} : { hint: answer.hint }),
    };
  }
  const [name, canonical, region, state] = answer.rows[0] ?? [];
  const placed = state as WhereIsState;
  switch (placed) {
    case "resident":
      return { table: name!, key: canonical!, region: region!, state: "resident" };
    case "placed by hash":
      return { table: name!, key: canonical!, region: region!, state: "unlisted" };
    case "replicated":
    case "pinned": {
      const where = placed === "pinned" ? `pinned in ${region}` : "replicated to every region";
      return {
        error: `table "${name}" is ${where}: its rows are not placed by key`,
        sqlstate: SqlState.wrong_object_type,
        hint: `Ask for a geo-partitioned table; WHERE IS ${name} <key> in the console shows where its rows are.`,
      };
    }
  }
}
