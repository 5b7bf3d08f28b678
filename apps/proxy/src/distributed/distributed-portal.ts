import type { DistributedWritePlan } from "@geo/core";
import {
  type Bind,
  encodeBind,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  Messages,
  PgError,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { inFailedTransaction, internalError } from "../errors/catalog.js";
import { noteWrite } from "../replicas/replica-read.js";
import { collationRefusalFor } from "../scatter/collation-refusal.js";
import { copiesEverywhere, oneCopyAnswer } from "./copies.js";
import { beginDistributedBatch } from "./distributed-batch.js";
import { collectAnswer, type LegAnswer } from "./leg-statement.js";
import { answerOf } from "./run-distributed-write.js";

const EXTENDED: StatementMode = { extended: true, final: false };

/**
 * A portal whose statement writes in several regions (extended protocol). Bind only records the
 * client's values; Execute runs each region's statement (a split INSERT's own rows) with them inside
 * the session's block, or inside a distributed transaction opened for the batch and committed in two
 * phases at the client's Sync. The client sees one answer, as in the simple protocol.
 */
export class DistributedPortal {
  private done = false;

  constructor(
    readonly analysis: Analysis,
    readonly plan: DistributedWritePlan,
    readonly bind: Bind,
    /** The types the client's Parse gave, by parameter number. */
    readonly clientTypes: readonly number[],
  ) {}

  /**
   * The row shape: the client's statement described in the first region (nothing runs). A session
   * that holds connections (a block, a batch, a pin) is described on them, where it will run: a
   * fresh connection would not see what the block did, and would wait on the locks it holds.
   */
  async describe(session: SessionPort): Promise<void> {
    await session.settle();
    const region = this.plan.regions[0] ?? session.runtime.router.topology.home.id;
    const holds = session.txn !== null || session.batchLegs.size > 0 || session.pinnedLeg !== null;
    const answer = holds
      ? await this.describeOnHeld(session, region)
      : await this.describeOnLease(session, region);
    if (answer === null) return;
    if (answer.error !== null) {
      session.fail(answer.error, EXTENDED);
      return;
    }
    session.relay.local({ bytes: answer.description ?? Messages.noData });
  }

  /** On the block's connection to `region` (the batch's block begins here if it has not yet). */
  private async describeOnHeld(session: SessionPort, region: string): Promise<LegAnswer | null> {
    if (session.txn === null) await beginDistributedBatch(session);
    const leg = await session.legFor(region, false, EXTENDED);
    if (leg instanceof PgError) {
      session.fail(leg, EXTENDED);
      return null;
    }
    await session.settle();
    if (leg.broken !== null || session.txn?.status === "E") {
      session.fail(leg.broken ?? inFailedTransaction(), EXTENDED);
      return null;
    }
    // Sync inside the block ends nothing; it only makes the backend answer at once.
    return collectAnswer(
      region,
      leg.connection,
      [...this.messages(this.analysis.text, false), encodeDescribe({ target: "P", name: "" }), Messages.sync],
      () => session.reattach(leg),
    );
  }

  /** On a connection borrowed for the describe alone and given back at once. */
  private async describeOnLease(session: SessionPort, region: string): Promise<LegAnswer | null> {
    let lease: Awaited<ReturnType<typeof session.runtime.pools.acquire>>;
    try {
      lease = await session.runtime.pools.acquire(region, session.user, session.database);
    } catch (error) {
      session.fail(error instanceof PgError ? error : internalError(error), EXTENDED);
      return null;
    }
    const answer = await collectAnswer(
      region,
      lease.connection,
      [...this.messages(this.analysis.text, false), encodeDescribe({ target: "P", name: "" }), Messages.sync],
      () => lease.connection.setReceiver(null),
    );
    if (lease.connection.txStatus === "I") lease.release();
    else lease.discard("left in a transaction by a describe");
    return answer;
  }

  async execute(session: SessionPort): Promise<void> {
    await session.settle();
    if (this.done) {
      // A second Execute of a completed portal: PostgreSQL answers with an empty completion.
      session.relay.local({ bytes: answerOf(session, this.analysis, this.plan, [], false) });
      return;
    }
    this.done = true;
    const differs =
      this.plan.regions.length > 1 ? await collationRefusalFor(session, this.plan.regions) : null;
    if (differs !== null) {
      session.fail(differs, EXTENDED);
      return;
    }
    if (session.txn === null) await beginDistributedBatch(session);
    const txn = session.txn!;
    const answers: LegAnswer[] = [];
    for (const statement of this.plan.statements) {
      const leg = await session.legFor(statement.region, false, EXTENDED);
      if (leg instanceof PgError) {
        session.fail(leg, EXTENDED);
        return;
      }
      await session.settle();
      if (leg.broken !== null || txn.status === "E") {
        session.fail(leg.broken ?? inFailedTransaction(), EXTENDED);
        return;
      }
      txn.writeRegion ??= leg.region;
      txn.writeRegions.add(leg.region);
      noteWrite(session, leg.region, leg);
      session.log.debug({ region: leg.region, sql: statement.sql }, "distributed write (extended)");
      // Sync inside the block ends nothing; it only makes the backend answer at once.
      const answer = await collectAnswer(
        leg.region,
        leg.connection,
        [...this.messages(statement.sql, true), Messages.sync],
        () => session.reattach(leg),
      );
      if (answer.error !== null) {
        session.fail(answer.error, EXTENDED);
        return;
      }
      answers.push(answer);
    }
    if (copiesEverywhere(session, this.analysis)) {
      // Copies that answered differently have diverged: the block fails and nothing commits.
      const diverged = oneCopyAnswer(session, this.analysis, answers).error;
      if (diverged !== null) {
        session.fail(diverged, EXTENDED);
        return;
      }
    }
    session.relay.local({ bytes: answerOf(session, this.analysis, this.plan, answers, false) });
  }

  /** Parse and Bind of `sql` with the client's values; parameters `sql` does not use are typed text. */
  private messages(sql: string, execute: boolean): Buffer[] {
    const count = this.bind.params.length;
    const paramTypes: number[] = [];
    for (let i = 0; i < count; i++) {
      const given = this.clientTypes[i] ?? 0;
      const used = new RegExp(`\\$${i + 1}(?![0-9])`).test(sql);
      // PostgreSQL cannot infer the type of a parameter the statement never mentions.
      paramTypes.push(given !== 0 || used ? given : 25);
    }
    const parts = [
      encodeParse({ name: "", sql, paramTypes }),
      encodeBind({
        portal: "",
        statement: "",
        paramFormats: this.bind.paramFormats,
        params: this.bind.params,
        resultFormats: this.bind.resultFormats,
      }),
    ];
    if (execute) parts.push(encodeExecute({ portal: "", maxRows: 0 }));
    return parts;
  }
}

/** A Bind whose values outlive the client's read buffer (they are views into it). */
export function copyBind(bind: Bind): Bind {
  return { ...bind, params: bind.params.map((value) => (value === null ? null : Buffer.from(value))) };
}
