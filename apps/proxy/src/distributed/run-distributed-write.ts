import type { DistributedWritePlan, RegionStatement } from "@geo/core";
import { encodeCommandComplete, PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { inFailedTransaction } from "../errors/catalog.js";
import { noteWrite } from "../replicas/replica-read.js";
import { collationRefusalFor } from "../scatter/collation-refusal.js";
import type { Transaction } from "../session/transaction.js";
import { commitAcrossRegions, rollbackAll } from "./commit-across-regions.js";
import { copiesEverywhere, oneCopyAnswer } from "./copies.js";
import { combinedTag, type LegAnswer, runCollected } from "./leg-statement.js";
import { refuseExtendedDistributedWrite } from "./txn-errors.js";

/**
 * A write the planner spread over regions: each region runs its own statement (a split INSERT
 * gets only its rows) on the session's connection there, inside the session's transaction block,
 * or inside an implicit one opened for this statement and committed in two phases at its end.
 * The client sees one answer: RETURNING rows in VALUES order (or region after region for
 * UPDATE/DELETE) and one tag with the rows of every region summed; a write every copy of a
 * replicated table ran answers as one server (one region's tag and rows), or, when the copies
 * affected different numbers of rows, is rolled back and refused.
 */
export async function runDistributedWrite(
  session: SessionPort,
  analysis: Analysis,
  plan: DistributedWritePlan,
  mode: StatementMode,
): Promise<void> {
  if (mode.extended) {
    session.fail(refuseExtendedDistributedWrite(plan.regions), mode);
    return;
  }
  await session.quiesceActive();
  await session.relay.idle();
  const differs = plan.regions.length > 1 ? await collationRefusalFor(session, plan.regions) : null;
  if (differs !== null) {
    session.fail(differs, mode);
    return;
  }
  const implicit = session.txn === null;
  const txn = session.txn ?? session.block.begin("BEGIN", true, session.settings.snapshot());
  const answers: LegAnswer[] = [];
  let failure: PgError | null = null;
  for (const statement of plan.statements) {
    const leg = await session.legFor(statement.region, false, mode);
    if (leg instanceof PgError) {
      failure = leg;
      break;
    }
    await session.quiesceActive();
    await session.relay.idle();
    txn.writeRegion ??= leg.region;
    txn.writeRegions.add(leg.region);
    // The session's later reads of this region must see the write (not a lagging replica).
    noteWrite(session, leg.region, leg);
    if (leg.broken !== null || txn.status === "E") {
      // The connection was lost, or reopening the block on it failed (that error was sent already).
      failure = leg.broken ?? inFailedTransaction();
      break;
    }
    session.log.debug({ region: leg.region, sql: statement.sql, kind: analysis.kind }, "distributed write");
    const answer = await runCollected(leg, statement.sql, (l) => session.reattach(l));
    answers.push(answer);
    if (answer.error !== null) {
      failure = answer.error;
      break;
    }
  }

  if (failure === null && copiesEverywhere(session, analysis)) {
    // Every copy must have answered alike before one answer stands for all (and before COMMIT).
    failure = oneCopyAnswer(session, analysis, answers).error;
  }
  if (failure !== null) {
    if (implicit) await endImplicit(session, txn, false);
    else session.block.fail();
    session.relay.error(failure, false);
    if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  if (implicit) {
    const error = await endImplicit(session, txn, true);
    if (error !== null) {
      session.relay.error(error, false);
      if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
      return;
    }
  }
  session.relay.local({ bytes: answerOf(session, analysis, plan, answers, true) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

/** Commits (two-phase) or rolls back the implicit block of one statement; null once committed. */
async function endImplicit(session: SessionPort, txn: Transaction, commit: boolean): Promise<PgError | null> {
  const legs = [...txn.legs.values()];
  let error: PgError | null = null;
  if (commit) error = await commitAcrossRegions(session, txn);
  else {
    await rollbackAll(legs);
    session.runtime.observability.transactionEnded("aborted");
  }
  session.block.end();
  const committed = commit && error === null;
  if (!committed) session.settings.restore(txn.settingsBefore);
  txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
  for (const leg of legs) session.releaseLeg(leg);
  return error;
}

/**
 * The client's answer to a statement spread over regions (an Execute gets no RowDescription). A
 * statement every copy ran answers as one server: one region's notices, rows and tag (the copies'
 * agreement was checked before the commit); a split statement answers with every region's rows
 * and their counts summed.
 */
export function answerOf(
  session: SessionPort,
  analysis: Analysis,
  plan: DistributedWritePlan,
  answers: readonly LegAnswer[],
  withDescription: boolean,
): Buffer {
  const copies = copiesEverywhere(session, analysis);
  const one = copies ? oneCopyAnswer(session, analysis, answers) : null;
  const chosen = one === null ? answers : one.error === null && one.answer !== undefined ? [one.answer] : [];
  const parts: Buffer[] = [];
  for (const answer of chosen) parts.push(...answer.notices);
  const description = chosen.find((answer) => answer.description !== null)?.description ?? null;
  if (withDescription && description !== null) parts.push(description);
  parts.push(...(chosen.length === 1 ? chosen[0]!.rows : orderedRows(plan.statements, chosen)));
  parts.push(encodeCommandComplete({ tag: combinedTag(chosen.map((answer) => answer.tag)) }));
  return Buffer.concat(parts);
}

/**
 * A split INSERT returns one row per VALUES row in each region, in the order the region got them:
 * put back where each came from. When a region returned a different number (ON CONFLICT DO NOTHING
 * skipped some), its rows cannot be placed and every answer goes region after region.
 */
function orderedRows(statements: readonly RegionStatement[], answers: readonly LegAnswer[]): Buffer[] {
  const placed: Buffer[] = [];
  let exact = true;
  statements.forEach((statement, i) => {
    const answer = answers[i];
    const rows = statement.rows;
    if (answer === undefined || rows === undefined || rows.length !== answer.rows.length) {
      exact = false;
      return;
    }
    rows.forEach((row, j) => {
      placed[row] = answer.rows[j]!;
    });
  });
  if (exact && !placed.includes(undefined as unknown as Buffer)) return placed;
  return answers.flatMap((answer) => answer.rows);
}
