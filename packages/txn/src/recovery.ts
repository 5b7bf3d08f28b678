import type { ClaimGuard, Coordinator } from "./coordinator.js";
import type { Decision, DecisionLog, DecisionRecord } from "./decision-log.js";
import { sqlStateOf, stepTimedOut } from "./errors.js";
import type { ParticipantConnector, RecoveryConnection } from "./participant.js";
import { commitPrepared, rollbackPrepared, scanPrepared, UNDEFINED_OBJECT } from "./sql-text.js";
import { connectWithin, queryWithin } from "./step-deadline.js";

export interface RecoveryOptions {
  /** The coordinator whose gids to recover: its prefix, and the transactions it is still driving. */
  coordinator: Coordinator;
  log: DecisionLog;
  connector: ParticipantConnector;
  /** Every region that can hold this coordinator's prepared transactions. */
  regions: readonly string[];
  /**
   * An undecided prepared transaction younger than this (by its server's clock) is left alone: its
   * coordinator may still be deciding. Keep it above the coordinator's decideDeadlineMs. Default 10 s.
   */
  graceMs?: number;
  /** Period of `start()`'s runs. Default 5 s. */
  intervalMs?: number;
  /**
   * Wall-clock ms before which every coordinator that issued this prefix's gids is known to be gone:
   * its undecided transactions are rolled back at once instead of after graceMs. Pass
   * `FileDecisionLog.ownedSince`: the file's lock proves that any earlier owner has exited or closed
   * the log, so a gid issued before it that the log has no decision for can never be decided. With
   * a log several processes share (the table log), no lock proves that; the node claim does, when
   * every decision is made under it: pass the instant the claim was taken (README, "Abandoned
   * transactions"). Otherwise leave it unset.
   */
  abandonedBefore?: number;
  /**
   * Longest wait for a region's connection and for its answer to each statement of a pass; past it
   * the region counts as not scanned (or not acted on) this pass, so a frozen region never holds up
   * the pass for the others. Default 5 s.
   */
  stepTimeoutMs?: number;
  /**
   * This process's claim on the prefix: a region where it is not held is not scanned or acted on
   * (a failure of the pass), since another process with the same prefix may be deciding there.
   */
  claim?: ClaimGuard;
  clock?: () => number;
}

export interface RecoveryAction {
  readonly gid: string;
  readonly region: string;
}

export interface RecoveryReport {
  readonly committed: RecoveryAction[];
  readonly rolledBack: RecoveryAction[];
  /** Undecided and still within the grace period. */
  readonly waiting: Array<RecoveryAction & { readonly ageMs: number }>;
  /** Decisions now acted on everywhere and marked complete in the log. */
  readonly completed: string[];
  /** Regions that could not be scanned or acted on, and log reads or writes that failed (no region). */
  readonly failures: Array<{ readonly region?: string; readonly gid?: string; readonly error: unknown }>;
}

interface Sighting {
  region: string;
  ageMs: number;
}

/**
 * Finishes what a coordinator left prepared: commits what the log decided to commit, rolls back what
 * it never decided once older than the grace period, or at once when a previous life of the process
 * left it (first recording the abort, so a slow coordinator reads it back instead of deciding to
 * commit), and never touches a prepared transaction whose gid this coordinator did not issue.
 */
export class Recovery {
  private readonly options: RecoveryOptions;
  private readonly graceMs: number;
  private readonly intervalMs: number;
  private readonly stepTimeoutMs: number;
  private running: Promise<RecoveryReport> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: RecoveryOptions) {
    this.options = options;
    this.graceMs = options.graceMs ?? 10_000;
    this.intervalMs = options.intervalMs ?? 5_000;
    this.stepTimeoutMs = options.stepTimeoutMs ?? 5_000;
  }

  /** One pass over every region; concurrent calls share the pass under way. */
  runOnce(): Promise<RecoveryReport> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * A pass that begins after this call: one under way is waited for, not shared, since it may have
   * scanned before a transaction the caller has just handed over was prepared.
   */
  async runFresh(): Promise<RecoveryReport> {
    await this.running?.catch(() => {});
    return this.runOnce();
  }

  /** Runs a pass now (the start-up recovery) and then every intervalMs until stop(). */
  async start(): Promise<RecoveryReport> {
    const report = await this.runOnce();
    this.timer ??= setInterval(() => void this.runOnce().catch(() => {}), this.intervalMs);
    this.timer.unref();
    return report;
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async pass(): Promise<RecoveryReport> {
    const { coordinator, log, connector } = this.options;
    const report: RecoveryReport = {
      committed: [],
      rolledBack: [],
      waiting: [],
      completed: [],
      failures: [],
    };
    // Read before scanning: a decision pending now was made after its PREPAREs, so if the scan then
    // finds it prepared nowhere, it is finished. Reading after could see a decision whose PREPAREs the
    // scan missed.
    const pendingBefore = await log.pending();
    // Likewise for what the coordinator handed over: past PREPARE already, so a scan that misses it
    // everywhere means nothing is left to do, even when no decision was ever recorded.
    const handedOver = coordinator.inDoubt().filter((t) => t.phase === "awaiting-recovery");

    const connections = new Map<string, RecoveryConnection>();
    const sightings = new Map<string, Sighting[]>();
    try {
      await Promise.all(
        this.options.regions.map(async (region) => {
          let connection: RecoveryConnection | undefined;
          try {
            const unclaimed = this.options.claim?.refusal([region]) ?? null;
            if (unclaimed !== null) throw unclaimed;
            connection = await connectWithin(connector, region, this.stepTimeoutMs, () =>
              stepTimedOut(region, "a connection for recovery", this.stepTimeoutMs),
            );
            const result = await queryWithin(
              connection,
              scanPrepared(coordinator.prefix),
              this.stepTimeoutMs,
              () => stepTimedOut(region, "the scan of pg_prepared_xacts", this.stepTimeoutMs),
            );
            for (const row of result.rows) {
              const gid = String(row["gid"]);
              // The SQL filter is a prefix match; ownership is the exact parse.
              if (!coordinator.gids.owns(gid)) continue;
              const list = sightings.get(gid) ?? [];
              list.push({ region, ageMs: Number(row["age_ms"]) });
              sightings.set(gid, list);
            }
            connections.set(region, connection);
          } catch (error) {
            await connection?.close().catch(() => {});
            report.failures.push({ region, error });
          }
        }),
      );

      for (const [gid, seen] of sightings) {
        if (coordinator.isActive(gid)) continue;
        try {
          await this.settle(gid, seen, connections, report);
        } catch (error) {
          // The log could not be read or written: leave this one for the next pass.
          report.failures.push({ gid, error });
        }
      }

      for (const record of pendingBefore) {
        // A shared log (the table) lists other nodes' decisions too: completing one of those would
        // let compaction delete a commit its own coordinator may still need to read.
        if (!coordinator.gids.owns(record.gid)) continue;
        if (sightings.has(record.gid) || coordinator.isActive(record.gid)) continue;
        if (!record.participants.every((region) => connections.has(region))) continue;
        await this.complete(record.gid, report);
      }

      for (const transaction of handedOver) {
        if (sightings.has(transaction.gid)) continue;
        if (transaction.participants.every((region) => connections.has(region))) {
          coordinator.noteResolved(transaction.gid);
        }
      }
    } finally {
      await Promise.all([...connections.values()].map((c) => c.close().catch(() => {})));
    }
    await log.compact().catch(() => {});
    return report;
  }

  private async settle(
    gid: string,
    seen: Sighting[],
    connections: Map<string, RecoveryConnection>,
    report: RecoveryReport,
  ): Promise<void> {
    const { coordinator, log } = this.options;
    const ageMs = Math.max(...seen.map((s) => s.ageMs));
    let record: DecisionRecord | undefined = await log.lookup(gid);
    if (record === undefined) {
      if (ageMs < this.graceMs && !this.abandoned(gid)) {
        for (const s of seen) report.waiting.push({ gid, region: s.region, ageMs: s.ageMs });
        coordinator.noteUnresolved(
          gid,
          seen.map((s) => s.region),
          ageMs,
          false,
        );
        return;
      }
      // Presumed abort, but written first: whichever of us and a late coordinator writes first decides.
      record = await log.decide({
        gid,
        decision: "abort",
        participants: seen.map((s) => s.region),
        decidedAt: (this.options.clock ?? Date.now)(),
      });
    }
    const remaining: string[] = [];
    for (const { region } of seen) {
      const connection = connections.get(region);
      if (connection === undefined || !(await this.apply(record.decision, gid, region, connection, report))) {
        remaining.push(region);
      }
    }
    const unscanned = record.participants.some((region) => !connections.has(region));
    if (remaining.length === 0 && !unscanned) {
      await this.complete(gid, report);
    } else {
      coordinator.noteUnresolved(gid, remaining, ageMs, record.decision === "commit");
    }
  }

  /**
   * Issued before every coordinator of this prefix but ours was gone (a previous life of this
   * process): no one can decide it any more. A gid of this life never counts, whatever its issuing
   * time says, while its coordinator drives it (pass() skips those); once the coordinator has let go
   * of an undecided gid it never decides it either, so a clock that stepped back is harmless.
   */
  private abandoned(gid: string): boolean {
    const before = this.options.abandonedBefore;
    const issuedAt = this.options.coordinator.gids.issuedAt(gid);
    return before !== undefined && issuedAt !== undefined && issuedAt < before;
  }

  private async apply(
    decision: Decision,
    gid: string,
    region: string,
    connection: RecoveryConnection,
    report: RecoveryReport,
  ): Promise<boolean> {
    // Scanned under the claim, but it may have been lost since: act only while it holds.
    const unclaimed = this.options.claim?.refusal([region]) ?? null;
    if (unclaimed !== null) {
      report.failures.push({ region, gid, error: unclaimed });
      return false;
    }
    try {
      const statement = decision === "commit" ? "COMMIT PREPARED" : "ROLLBACK PREPARED";
      await queryWithin(
        connection,
        decision === "commit" ? commitPrepared(gid) : rollbackPrepared(gid),
        this.stepTimeoutMs,
        () => stepTimedOut(region, statement, this.stepTimeoutMs),
      );
    } catch (error) {
      if (sqlStateOf(error) !== UNDEFINED_OBJECT) {
        report.failures.push({ region, gid, error });
        return false;
      }
    }
    (decision === "commit" ? report.committed : report.rolledBack).push({ gid, region });
    return true;
  }

  private async complete(gid: string, report: RecoveryReport): Promise<void> {
    try {
      await this.options.log.complete(gid);
      report.completed.push(gid);
      this.options.coordinator.noteResolved(gid);
    } catch (error) {
      report.failures.push({ gid, error });
    }
  }
}
