import type { GeoConfig, Topology } from "@geo/core";
import {
  encodeCommandComplete,
  encodeDataRow,
  encodeNoticeResponse,
  PgError,
  Severity,
  SqlState,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { parseRebalance } from "../console/rebalance.js";
import { MOVE_COLUMNS, parseRelocate } from "../console/relocate.js";
import { textRowDescription } from "../console/text-row-description.js";
import type { DirectoryStore } from "../directory/directory-store.js";
import type { RegionRunner } from "../directory/region-runner.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { moveInTransaction, notAnOperator, unknownRegion } from "./move-errors.js";
import type { KeyMover, MovedTable } from "./move-keys.js";
import type { MovingSession } from "./moving-session.js";
import { rebalance } from "./rebalance-keys.js";

/** What RELOCATE and REBALANCE run with: the parts of `Moves` they read. */
export interface MoveCommandContext {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly store: DirectoryStore;
  readonly runner: RegionRunner;
  readonly mover: KeyMover;
  /** Keys per REBALANCE batch when the command names none (`[directory_store] batch`). */
  readonly batch: number;
}

/** A command's answer before it is encoded: one row per table moved, and its completion tag. */
interface MoveAnswer {
  rows: string[][];
  tag: string;
}

/**
 * Runs RELOCATE or REBALANCE for a simple query: answers (rows, progress notices, errors) go
 * through the session's relay in order. False when `analysis` is neither. Only an operator may
 * move keys (never under trust auth, where anyone is anyone), and never inside a transaction
 * block, whose own writes the move could not see.
 */
export async function runMoveCommand(
  context: MoveCommandContext,
  session: MovingSession,
  analysis: Analysis,
  mode: StatementMode,
): Promise<boolean> {
  const command = analysis.console?.command;
  if (command !== "relocate" && command !== "rebalance") return false;
  const name = command.toUpperCase();
  const auth = context.config.auth;
  const error =
    auth.method === "trust" || !auth.operators.includes(session.user)
      ? notAnOperator(name, session.user, auth.method === "trust")
      : session.txn !== null
        ? moveInTransaction(name)
        : undefined;
  if (error !== undefined) {
    session.fail(error, mode);
    return true;
  }
  const argument = analysis.console?.argument ?? "";
  const answer =
    command === "relocate"
      ? await runRelocate(context, argument)
      : await runRebalance(context, session, argument);
  if (answer instanceof PgError) {
    session.fail(answer, mode);
    return true;
  }
  session.relay.local({ bytes: answerBytes(answer.rows, answer.tag) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  return true;
}

/** RELOCATE: one move of the keys named, answered with the tables moved and the rows in all. */
async function runRelocate(context: MoveCommandContext, argument: string): Promise<MoveAnswer | PgError> {
  const request = parseRelocate(argument);
  if (request instanceof PgError) return request;
  const moved = await context.mover.move(request.keys, request.to);
  if (moved instanceof PgError) return moved;
  return { rows: moved.map(rowOf), tag: `RELOCATE ${moved.reduce((sum, row) => sum + row.rows, 0)}` };
}

/**
 * REBALANCE: moves in batches, a NOTICE after each so a long run shows its progress before the
 * answer. A batch refused midway stops the run without undoing the batches already committed:
 * a WARNING and a `(stopped)` row say so, and the tag counts the keys that did move.
 */
async function runRebalance(
  context: MoveCommandContext,
  session: MovingSession,
  argument: string,
): Promise<MoveAnswer | PgError> {
  const request = parseRebalance(argument);
  if (request instanceof PgError) return request;
  const regions = context.topology.regionIds;
  for (const region of [request.from, request.to])
    if (!context.topology.hasRegion(region)) return unknownRegion(region, regions);
  const report = await rebalance(
    context.store,
    context.runner,
    context.mover,
    {
      from: request.from,
      to: request.to,
      limit: request.limit,
      batch: request.batch ?? context.batch,
    },
    (done, total, batch, batches, ms) => {
      session.relay.local({
        bytes: encodeNoticeResponse(
          new PgError({
            severity: Severity.NOTICE,
            code: SqlState.successful_completion,
            message: `rebalance ${request.from} to ${request.to}: batch ${batch} of ${batches} moved, ${done} of ${total} keys (${ms.toFixed(0)} ms)`,
          }),
        ),
      });
    },
  );
  if (report instanceof PgError) return report;
  const rows = report.moved.map(rowOf);
  if (report.refused !== undefined) {
    const { keys, error } = report.refused;
    session.relay.local({
      bytes: encodeNoticeResponse(
        new PgError({
          severity: Severity.WARNING,
          code: error.code,
          message: `rebalance stopped after ${report.keysMoved} keys: the move of ${keys.length} more was refused: ${error.message}`,
          ...(error.hint === undefined ? {} : { hint: error.hint }),
        }),
      ),
    });
    rows.push(["(stopped)", request.from, request.to, "0", `refused ${error.code}`]);
  }
  return { rows, tag: `REBALANCE ${report.keysMoved}` };
}

/** One table's move as an answer row, in the order of `MOVE_COLUMNS`. */
function rowOf(row: MovedTable): string[] {
  return [row.table, row.from, row.to, String(row.rows), row.state];
}

/**
 * The whole answer as one buffer (RowDescription, DataRows, CommandComplete): every column is
 * text, so the rows need no type of their own, and one relay entry keeps them in order after the
 * notices sent while the command ran.
 */
function answerBytes(rows: readonly string[][], tag: string): Buffer {
  const parts = [textRowDescription(MOVE_COLUMNS)];
  for (const row of rows) parts.push(encodeDataRow({ values: row.map((value) => Buffer.from(value)) }));
  parts.push(encodeCommandComplete({ tag }));
  return Buffer.concat(parts);
}
