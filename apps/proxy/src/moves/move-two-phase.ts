import type { GeoConfig, Topology } from "@geo/core";
import {
  type ClaimGuard,
  Coordinator,
  GidFactory,
  type ParticipantConnector,
  Recovery,
  TableDecisionLog,
} from "@geo/txn";
import { query, type RegionRunner } from "../directory/region-runner.js";
import { ownDecisions } from "../distributed/own-decisions.js";
import { movePrefixFor } from "../distributed/txn-service.js";
import type { Logger } from "../log.js";

/** The table of move decisions in the home region (two-phase commit of moves). */
export const MOVE_DECISIONS = "geoproxy_move_decisions";

/** The moves' own two-phase commit: its coordinator, the recovery finishing what it left, its log. */
export interface MoveTwoPhase {
  readonly coordinator: Coordinator;
  readonly recovery: Recovery;
  readonly log: TableDecisionLog;
}

/** What opening the moves' two-phase commit reads (the `Moves` options carry all of it). */
export interface MoveTwoPhaseOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly log: Logger;
  readonly claim?: ClaimGuard;
  readonly abandonedBefore?: number;
}

/**
 * Opens the two-phase commit the moves decide through: a decision table in the home region, a
 * coordinator under the node's move prefix, and a recovery started at once, so the moves a
 * previous run left prepared are finished (or rolled back) before any new one. It is separate from
 * the statement coordinator (own prefix, own table) so that neither's recovery ever claims the
 * other's transactions. A failed start-up recovery is logged, not thrown: it is retried at the
 * recovery interval.
 */
export async function openMoveTwoPhase(
  runner: RegionRunner,
  options: MoveTwoPhaseOptions,
): Promise<MoveTwoPhase> {
  const home = options.topology.home.id;
  const log = await TableDecisionLog.open({
    executor: { query: async (sql) => toResult(await runner.run(home, sql)) },
    table: MOVE_DECISIONS,
  });
  const connector = runnerConnector(runner);
  // Its own prefix: the statement coordinator's recovery never claims a move's transactions.
  const prefix = movePrefixFor(options.config.server.node);
  // The table is every proxy's over this home region: recovery sees only this node's moves.
  const own = ownDecisions(log, new GidFactory(prefix));
  const coordinator = new Coordinator({
    prefix,
    log: own,
    connector,
    // Below the grace period recovery gives it, as for the statement coordinator.
    decideDeadlineMs: options.config.txn.decideDeadlineMs,
    stepTimeoutMs: options.config.txn.stepTimeoutMs,
    ...(options.claim === undefined ? {} : { claim: options.claim }),
  });
  const recovery = new Recovery({
    coordinator,
    log: own,
    connector,
    regions: options.topology.regionIds,
    graceMs: options.config.txn.recoveryGraceMs,
    intervalMs: options.config.txn.recoveryIntervalMs,
    stepTimeoutMs: options.config.txn.stepTimeoutMs,
    ...(options.claim === undefined ? {} : { claim: options.claim }),
    ...(options.abandonedBefore === undefined ? {} : { abandonedBefore: options.abandonedBefore }),
  });
  await recovery.start().catch((error: unknown) => {
    options.log.warn({ err: error }, "start-up recovery of moves failed; it is retried");
  });
  return { coordinator, recovery, log };
}

/**
 * Participants' connections for a recovery or a move's commit: the proxy's own pooled connections
 * through `runner`, one closed rather than pooled when a step went unanswered.
 */
export function runnerConnector(runner: RegionRunner): ParticipantConnector {
  return {
    connect: async (region) => {
      const lease = await runner.acquire(region);
      return {
        query: async (sql) => toResult(await query(lease, sql)),
        // Unanswered within the step deadline: its state is unknown, so it is closed.
        abandon: () => {
          lease.connection.destroy();
          lease.discard("a commit step went unanswered");
        },
        close: async () => {
          if (lease.connection.txStatus !== "I") lease.discard("recovery left it in a transaction");
          else lease.release();
        },
      };
    },
  };
}

/**
 * A region runner's rows in the shape `@geo/txn` executors answer with: the decision log and the
 * participants read `command` where the runner says `tag`.
 */
export function toResult(rows: { rows: Record<string, string | null>[]; tag: string }): {
  rows: Record<string, unknown>[];
  command: string;
} {
  return { rows: rows.rows, command: rows.tag };
}
