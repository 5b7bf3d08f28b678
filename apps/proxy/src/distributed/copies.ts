import type { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import { copiesDiverged } from "./copy-errors.js";
import { type LegAnswer, tagCount } from "./leg-statement.js";

/**
 * The same statement run on every copy (a replicated table without a writer, schema changes):
 * each region answers alike, and the client sees one region's answer, as from one server.
 */
export function copiesEverywhere(session: SessionPort, analysis: Analysis): boolean {
  if (analysis.kind === "ddl") return true;
  return replicatedWrites(session, analysis).length > 0;
}

function replicatedWrites(session: SessionPort, analysis: Analysis): string[] {
  const tables = session.runtime.router.topology.tables;
  return analysis.tables
    .filter((table) => table.access === "write" && tables.get(table.name)?.placement === "global_replicated")
    .map((table) => table.name);
}

/**
 * The one answer of a statement every copy ran: the home region's when it ran there, else the
 * first region's in the plan's order, so the choice never depends on timing. Every region must
 * have affected as many rows as the chosen one (its tag's count and its RETURNING rows); when one
 * did not, the copies have diverged and the error says where.
 */
export function oneCopyAnswer(
  session: SessionPort,
  analysis: Analysis,
  answers: readonly LegAnswer[],
): { readonly answer: LegAnswer | undefined; readonly error: null } | { readonly error: PgError } {
  const home = session.runtime.router.topology.home.id;
  const answer = answers.find((a) => a.region === home) ?? answers[0];
  if (answer === undefined) return { answer, error: null };
  const count = (a: LegAnswer): number => tagCount(a.tag) ?? a.rows.length;
  const agree = answers.every(
    (a) => count(a) === count(answer) && a.rows.length === answer.rows.length && a.tag === answer.tag,
  );
  if (agree) return { answer, error: null };
  const counts = answers.map((a) => ({ region: a.region, rows: count(a) }));
  return { error: copiesDiverged(replicatedWrites(session, analysis), counts) };
}
