import { backoffDelay, sleep } from "./backoff.js";
import type { DecisionLog, DecisionRecord } from "./decision-log.js";
import {
  decidedAbortElsewhere,
  duplicateRegion,
  gidInUse,
  isConnectionFailure,
  isStepTimeout,
  noParticipants,
  participantRefused,
  prepareRolledBack,
  prepareTimedOut,
  prepareTooSlow,
  prepareUnreachable,
  resolutionUnknown,
  sqlStateOf,
  stepTimedOut,
  type TxnError,
} from "./errors.js";
import { GidFactory } from "./gid.js";
import type {
  Participant,
  ParticipantConnector,
  QueryResult,
  RecoveryConnection,
  SqlExecutor,
} from "./participant.js";
import {
  commitPrepared,
  prepareTransaction,
  rollback,
  rollbackPrepared,
  UNDEFINED_OBJECT,
} from "./sql-text.js";
import { connectWithin, queryWithin } from "./step-deadline.js";
import type { TxnObserver, TxnOutcome, TxnStep } from "./steps.js";

/**
 * Where a tracked transaction stands. "awaiting-recovery" means the coordinator has done what it can
 * inline and recovery finishes the rest (commit or roll back, as the log says).
 */
export const TXN_PHASES = ["preparing", "deciding", "committing", "aborting", "awaiting-recovery"] as const;
export type TxnPhase = (typeof TXN_PHASES)[number];

export interface CoordinatorOptions {
  /** Identifies this coordinator in every gid, e.g. `geo_node1`; recovery touches only its own. */
  prefix: string;
  log: DecisionLog;
  observer?: TxnObserver;
  /** Fresh connections for retrying COMMIT PREPARED when a participant's own connection broke. */
  connector?: ParticipantConnector;
  /** Tries of COMMIT PREPARED per participant before handing it to recovery. Default 4. */
  commitAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * Longest time from the first PREPARE to writing the decision; past it the transaction aborts.
   * Keep it below recovery's grace period. Default 5 s.
   */
  decideDeadlineMs?: number;
  /**
   * Longest wait for a region's answer to COMMIT PREPARED, ROLLBACK PREPARED or ROLLBACK (and for a
   * fresh connection to retry on). Past it the connection is abandoned and the region left to
   * recovery: a COMMIT PREPARED that times out leaves the commit in doubt, never undone. PREPARE is
   * bounded by what is left of `decideDeadlineMs` instead. Default 5 s.
   */
  stepTimeoutMs?: number;
  /**
   * This process's claim on the prefix (`NodeClaim`): a commit whose regions it does not all hold
   * is refused before PREPARE, and aborted if the claim is lost before the decision is written, so
   * no decision is ever made while another process may be recovering this prefix's transactions.
   */
  claim?: ClaimGuard;
  clock?: () => number;
}

/** What the coordinator and recovery ask of a claim: the error to refuse with, or null when held. */
export interface ClaimGuard {
  refusal(regions: readonly string[]): TxnError | null;
  held(region: string): boolean;
}

export interface CommitOptions {
  /** An id from `newGid()`, when the caller needs it before committing. */
  gid?: string;
}

export interface CommitResult {
  readonly gid: string;
  /** "committed": acknowledged everywhere. "in-doubt": decided and durable, some regions left to recovery. */
  readonly outcome: Extract<TxnOutcome, "committed" | "in-doubt">;
  /** Regions whose COMMIT PREPARED is still owed. */
  readonly unresolved: readonly string[];
}

export interface InDoubtTransaction {
  readonly gid: string;
  readonly ageMs: number;
  readonly participants: readonly string[];
  readonly phase: TxnPhase;
  /** Decided to commit: it can only end committed. */
  readonly decided: boolean;
  readonly unresolved: readonly string[];
}

export interface CoordinatorStats {
  readonly committed: number;
  readonly aborted: number;
  readonly inDoubt: number;
}

interface Tracked {
  gid: string;
  participants: string[];
  startedAt: number;
  phase: TxnPhase;
  decided: boolean;
  unresolved: Set<string>;
}

interface Refusal {
  participant: Participant;
  error: TxnError;
  /** The connection broke: PREPARE may have run, so a prepared transaction may be left behind. */
  maybePrepared: boolean;
  /**
   * No answer within the deadline; the connection was abandoned. Nothing more is sent there now:
   * the region most likely answers nothing else either, and a PREPARE still in its socket may land
   * after any ROLLBACK PREPARED sent now, so the recorded abort leaves it to recovery.
   */
  timedOut: boolean;
}

const RECENT_DECISIONS = 4096;

/**
 * Two-phase commit over participants in several regions, in this order and no other:
 * PREPARE TRANSACTION everywhere, then the decision written durably to the log (the point of no
 * return), then COMMIT PREPARED everywhere. A refusal before the decision rolls everything back; a
 * failure after it only delays the commit.
 *
 * @example
 * const log = await FileDecisionLog.open({ path: "/var/lib/geoproxy/decisions.log" });
 * const coordinator = new Coordinator({ prefix: "geo_node1", log });
 * // eu and us are connections inside BEGIN ... with the writes done
 * const { outcome } = await coordinator.commit([eu, us]);
 */
export class Coordinator {
  readonly gids: GidFactory;
  private readonly log: DecisionLog;
  private readonly observer: TxnObserver | undefined;
  private readonly connector: ParticipantConnector | undefined;
  private readonly commitAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly decideDeadlineMs: number;
  private readonly stepTimeoutMs: number;
  private readonly clock: () => number;
  private readonly claim: ClaimGuard | undefined;
  private readonly tracked = new Map<string, Tracked>();
  private readonly recentlyDecided = new Set<string>();
  private counts = { committed: 0, aborted: 0, inDoubt: 0 };

  constructor(options: CoordinatorOptions) {
    this.gids = new GidFactory(options.prefix);
    this.log = options.log;
    this.observer = options.observer;
    this.connector = options.connector;
    this.commitAttempts = Math.max(1, options.commitAttempts ?? 4);
    this.retryBaseMs = options.retryBaseMs ?? 25;
    this.retryMaxMs = options.retryMaxMs ?? 1000;
    this.decideDeadlineMs = options.decideDeadlineMs ?? 5_000;
    this.stepTimeoutMs = options.stepTimeoutMs ?? 5_000;
    this.clock = options.clock ?? Date.now;
    this.claim = options.claim;
  }

  get prefix(): string {
    return this.gids.prefix;
  }

  newGid(): string {
    return this.gids.next(this.clock());
  }

  /**
   * Commits the participants' open transactions all or none. Resolves once the decision is durable
   * (outcome "committed", or "in-doubt" when some COMMIT PREPARED is left to recovery: still a commit).
   * Rejects with the refusing participant's error, a retryable 40001, or 08007 when the decision log
   * failed and the outcome is for recovery to settle.
   */
  async commit(participants: readonly Participant[], options: CommitOptions = {}): Promise<CommitResult> {
    if (participants.length === 0) throw noParticipants();
    const regions = participants.map((p) => p.region);
    const seen = new Set<string>();
    for (const region of regions) {
      if (seen.has(region)) throw duplicateRegion(region);
      seen.add(region);
    }
    const gid = options.gid === undefined ? this.newGid() : this.gids.assertOwn(options.gid);
    if (this.tracked.has(gid)) throw gidInUse(gid);
    const unclaimed = this.claim?.refusal(regions) ?? null;
    if (unclaimed !== null) {
      // Nothing prepared yet: the open transactions are simply rolled back.
      await this.rollback(participants);
      this.finish("aborted", gid);
      throw unclaimed;
    }
    const tracked: Tracked = {
      gid,
      participants: regions,
      startedAt: this.clock(),
      phase: "preparing",
      decided: false,
      unresolved: new Set(regions),
    };
    // Registered before the first PREPARE so recovery in this process never mistakes it for abandoned.
    this.tracked.set(gid, tracked);

    const { prepared, refusals } = await this.prepareAll(tracked, participants);
    const first = refusals[0];
    if (first !== undefined) {
      await this.abort(tracked, prepared, refusals);
      throw first.error;
    }

    const elapsed = this.clock() - tracked.startedAt;
    if (elapsed > this.decideDeadlineMs) {
      await this.abort(tracked, prepared, []);
      throw prepareTooSlow(elapsed, this.decideDeadlineMs);
    }
    // The claim may have been lost while preparing; deciding now could race another process's recovery.
    const lost = this.claim?.refusal(regions) ?? null;
    if (lost !== null) {
      await this.abort(tracked, prepared, []);
      throw lost;
    }

    tracked.phase = "deciding";
    await this.step("decide", gid);
    let decision: DecisionRecord;
    try {
      decision = await this.log.decide({
        gid,
        decision: "commit",
        participants: regions,
        decidedAt: this.clock(),
      });
    } catch (error) {
      tracked.phase = "awaiting-recovery";
      this.finish("in-doubt", gid);
      throw resolutionUnknown(gid, error);
    }
    if (decision.decision === "abort") {
      await this.abort(tracked, prepared, []);
      throw decidedAbortElsewhere(gid);
    }

    tracked.decided = true;
    tracked.phase = "committing";
    this.remember(gid);
    await this.step("decided", gid);

    const acknowledged = await Promise.all(participants.map((p) => this.commitOne(gid, p)));
    participants.forEach((p, i) => {
      if (acknowledged[i]) tracked.unresolved.delete(p.region);
    });
    if (tracked.unresolved.size > 0) {
      tracked.phase = "awaiting-recovery";
      this.finish("in-doubt", gid);
      return { gid, outcome: "in-doubt", unresolved: [...tracked.unresolved] };
    }
    this.tracked.delete(gid);
    // A lost completion costs recovery one look at pg_prepared_xacts, nothing more.
    await this.log.complete(gid).catch(() => {});
    await this.step("completed", gid);
    this.finish("committed", gid);
    return { gid, outcome: "committed", unresolved: [] };
  }

  /**
   * Rolls back open (not yet prepared) transactions, as for a client's ROLLBACK. Resolves with the
   * regions whose ROLLBACK failed; their connections should be discarded, which rolls them back too.
   */
  async rollback(participants: readonly Participant[]): Promise<string[]> {
    const results = await Promise.all(
      participants.map((p) =>
        this.ask(p, p.region, rollback, "ROLLBACK").then(
          () => undefined,
          () => p.region,
        ),
      ),
    );
    return results.filter((region): region is string => region !== undefined);
  }

  /**
   * True once the commit decision for gid is durable. From then on a client's cancel must not reach
   * the participants: cancelling a COMMIT PREPARED would only leave a committed transaction prepared.
   */
  isDecided(gid: string): boolean {
    return this.tracked.get(gid)?.decided === true || this.recentlyDecided.has(gid);
  }

  phaseOf(gid: string): TxnPhase | undefined {
    return this.tracked.get(gid)?.phase;
  }

  /** True while this coordinator is itself driving gid; recovery leaves such transactions alone. */
  isActive(gid: string): boolean {
    const tracked = this.tracked.get(gid);
    return tracked !== undefined && tracked.phase !== "awaiting-recovery";
  }

  /** Transactions prepared (or being prepared) and not yet resolved everywhere: SHOW IN DOUBT. */
  inDoubt(): InDoubtTransaction[] {
    const now = this.clock();
    return [...this.tracked.values()].map((t) => ({
      gid: t.gid,
      ageMs: now - t.startedAt,
      participants: [...t.participants],
      phase: t.phase,
      decided: t.decided,
      unresolved: [...t.unresolved],
    }));
  }

  stats(): CoordinatorStats {
    return { ...this.counts };
  }

  /**
   * Recovery's report of a transaction it found prepared and could not settle yet (within the grace
   * period, or a region unreachable), so SHOW IN DOUBT lists it.
   */
  noteUnresolved(gid: string, regions: readonly string[], ageMs: number, decided: boolean): void {
    const existing = this.tracked.get(gid);
    if (existing !== undefined) {
      if (existing.phase === "awaiting-recovery") existing.unresolved = new Set(regions);
      return;
    }
    this.tracked.set(gid, {
      gid,
      participants: [...regions],
      startedAt: this.clock() - ageMs,
      phase: "awaiting-recovery",
      decided,
      unresolved: new Set(regions),
    });
    if (decided) this.remember(gid);
  }

  /** Recovery settled gid everywhere. */
  noteResolved(gid: string): void {
    const tracked = this.tracked.get(gid);
    if (tracked !== undefined && tracked.phase === "awaiting-recovery") this.tracked.delete(gid);
  }

  private async prepareAll(
    tracked: Tracked,
    participants: readonly Participant[],
  ): Promise<{ prepared: Participant[]; refusals: Refusal[] }> {
    const gid = tracked.gid;
    const prepared: Participant[] = [];
    const refusals: Refusal[] = [];
    await Promise.all(
      participants.map(async (participant) => {
        const region = participant.region;
        await this.step("prepare", gid, region);
        // A PREPARE answered after the decide deadline would be aborted anyway, so no longer is waited.
        const budget = this.decideDeadlineMs - (this.clock() - tracked.startedAt);
        try {
          const result = await queryWithin(participant, prepareTransaction(gid), budget, () =>
            stepTimedOut(region, "PREPARE TRANSACTION", this.decideDeadlineMs),
          );
          // In a transaction that already failed PostgreSQL answers PREPARE with the tag ROLLBACK, no error.
          if (result.command?.toUpperCase().startsWith("ROLLBACK")) {
            refusals.push({
              participant,
              error: prepareRolledBack(region),
              maybePrepared: false,
              timedOut: false,
            });
            await this.step("prepare-refused", gid, region);
            return;
          }
        } catch (error) {
          const timedOut = isStepTimeout(error);
          const maybePrepared = timedOut || isConnectionFailure(error);
          refusals.push({
            participant,
            error: timedOut
              ? prepareTimedOut(region, this.decideDeadlineMs)
              : maybePrepared
                ? prepareUnreachable(region, error)
                : participantRefused(region, error),
            maybePrepared,
            timedOut,
          });
          await this.step("prepare-refused", gid, region);
          return;
        }
        prepared.push(participant);
        await this.step("prepared", gid, region);
      }),
    );
    // The participant's own verdict (23505, 40001 from PostgreSQL) says more than a lost connection.
    refusals.sort((a, b) => Number(a.maybePrepared) - Number(b.maybePrepared));
    return { prepared, refusals };
  }

  private async abort(
    tracked: Tracked,
    prepared: readonly Participant[],
    refusals: readonly Refusal[],
  ): Promise<void> {
    const gid = tracked.gid;
    tracked.phase = "aborting";
    const leftover = new Set<string>();
    await Promise.all([
      ...prepared.map(async (participant) => {
        await this.step("rollback", gid, participant.region);
        if (!(await this.rollbackPreparedIn(gid, participant.region, participant)))
          leftover.add(participant.region);
      }),
      ...refusals.map(async ({ participant, maybePrepared, timedOut }) => {
        await this.step("rollback", gid, participant.region);
        if (timedOut) {
          leftover.add(participant.region);
          return;
        }
        // After a failed PREPARE the transaction is already gone; ROLLBACK only settles the session.
        await this.ask(participant, participant.region, rollback, "ROLLBACK").catch(() => {});
        if (maybePrepared && !(await this.rollbackPreparedIn(gid, participant.region, undefined))) {
          leftover.add(participant.region);
        }
      }),
    ]);
    tracked.unresolved = leftover;
    if (leftover.size > 0) {
      // A recorded abort lets recovery roll back at once instead of waiting out the grace period.
      await this.log
        .decide({ gid, decision: "abort", participants: tracked.participants, decidedAt: this.clock() })
        .catch(() => {});
      tracked.phase = "awaiting-recovery";
    } else {
      this.tracked.delete(gid);
    }
    await this.step("aborted", gid);
    this.finish("aborted", gid);
  }

  /** ROLLBACK PREPARED on the participant's connection, else a fresh one; true when nothing is left prepared. */
  private async rollbackPreparedIn(
    gid: string,
    region: string,
    own: SqlExecutor | undefined,
  ): Promise<boolean> {
    if (own !== undefined) {
      const outcome = await this.settles(own, region, rollbackPrepared(gid));
      // A region that let the deadline pass on its own connection is not asked again on another.
      if (outcome !== "failed") return outcome === "settled";
    }
    if (this.connector === undefined) return false;
    try {
      const fresh = await connectWithin(this.connector, region, this.stepTimeoutMs, () =>
        stepTimedOut(region, "a connection for ROLLBACK PREPARED", this.stepTimeoutMs),
      );
      try {
        return (await this.settles(fresh, region, rollbackPrepared(gid))) === "settled";
      } finally {
        await fresh.close().catch(() => {});
      }
    } catch {
      return false;
    }
  }

  /** Runs a ROLLBACK PREPARED; "does not exist" (42704) counts as done, as nothing is left prepared. */
  private async settles(
    executor: SqlExecutor,
    region: string,
    sql: string,
  ): Promise<"settled" | "failed" | "timed-out"> {
    try {
      await this.ask(executor, region, sql, "ROLLBACK PREPARED");
      return "settled";
    } catch (error) {
      if (isStepTimeout(error)) return "timed-out";
      return sqlStateOf(error) === UNDEFINED_OBJECT ? "settled" : "failed";
    }
  }

  /** One of the coordinator's own statements, answered within the step deadline or abandoned. */
  private ask(executor: SqlExecutor, region: string, sql: string, statement: string): Promise<QueryResult> {
    return queryWithin(executor, sql, this.stepTimeoutMs, () =>
      stepTimedOut(region, statement, this.stepTimeoutMs),
    );
  }

  /**
   * COMMIT PREPARED with retries: on the participant's own connection while it works (a cancelled or
   * failed statement leaves it usable), on fresh connections from the connector once it has broken.
   */
  private async commitOne(gid: string, participant: Participant): Promise<boolean> {
    const region = participant.region;
    await this.step("commit-prepared", gid, region);
    let ownConnectionWorks = true;
    for (let attempt = 0; attempt < this.commitAttempts; attempt++) {
      if (attempt > 0) await sleep(backoffDelay(attempt - 1, this.retryBaseMs, this.retryMaxMs));
      let fresh: RecoveryConnection | undefined;
      try {
        if (!ownConnectionWorks)
          fresh = await connectWithin(this.connector!, region, this.stepTimeoutMs, () =>
            stepTimedOut(region, "a connection for COMMIT PREPARED", this.stepTimeoutMs),
          );
        await this.ask(fresh ?? participant, region, commitPrepared(gid), "COMMIT PREPARED");
        await this.step("committed-prepared", gid, region);
        return true;
      } catch (error) {
        // The decision is final, so only an earlier attempt whose answer was lost, or recovery, can
        // have resolved it, and the same way.
        if (sqlStateOf(error) === UNDEFINED_OBJECT) {
          await this.step("committed-prepared", gid, region);
          return true;
        }
        await this.step("commit-prepared-failed", gid, region);
        // A region that let the deadline pass is left to recovery: retrying would only keep the
        // client waiting on a region that is not answering, for a commit that is already decided.
        if (isStepTimeout(error)) return false;
        if (isConnectionFailure(error)) {
          if (this.connector === undefined) return false;
          ownConnectionWorks = false;
        }
      } finally {
        await fresh?.close().catch(() => {});
      }
    }
    return false;
  }

  private remember(gid: string): void {
    this.recentlyDecided.add(gid);
    if (this.recentlyDecided.size > RECENT_DECISIONS) {
      const oldest = this.recentlyDecided.values().next().value;
      if (oldest !== undefined) this.recentlyDecided.delete(oldest);
    }
  }

  private finish(outcome: TxnOutcome, gid: string): void {
    switch (outcome) {
      case "committed":
        this.counts.committed++;
        break;
      case "aborted":
        this.counts.aborted++;
        break;
      case "in-doubt":
        this.counts.inDoubt++;
        break;
      default:
        assertNever(outcome);
    }
    try {
      this.observer?.onOutcome?.(outcome, gid);
    } catch {
      // Observers are for tests and metrics; they never change an outcome.
    }
  }

  private async step(step: TxnStep, gid: string, region?: string): Promise<void> {
    const hook = this.observer?.onStep;
    if (hook === undefined) return;
    try {
      const pending = hook.call(this.observer, region === undefined ? { step, gid } : { step, gid, region });
      if (pending !== undefined) await pending;
    } catch {
      // Observers are for tests and metrics; they never change an outcome.
    }
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected outcome ${String(value)}`);
}
