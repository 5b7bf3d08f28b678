import type { TransactionStatus } from "@geo/proto";
import type { Leg } from "../executor/leg.js";
import type { SessionSettings } from "../session/session-settings.js";
import { Transaction } from "../session/transaction.js";
import type { LegSet } from "./leg-set.js";

/**
 * The states of a session's transaction block, as every path sees them (one region, pinned,
 * scatter, distributed write, extended batch, pipeline):
 * - `idle`: no block; statements run in autocommit.
 * - `open`: a block is open (explicitly, or implicitly for a string or a batch).
 * - `failed`: a statement failed inside it; only ROLLBACK (or ROLLBACK TO) gets through.
 * - `committing`: its two-phase commit is under way; once decided, cancels stop at the proxy.
 */
export type BlockState = "idle" | "open" | "failed" | "committing";

/** The one state machine of a session's transaction block. */
export class TransactionBlock {
  private transaction: Transaction | null = null;
  private commitGid: string | null = null;

  constructor(private readonly legs: LegSet) {}

  /** The open block, or null when idle. */
  get current(): Transaction | null {
    return this.transaction;
  }

  get state(): BlockState {
    const txn = this.transaction;
    if (txn === null) return "idle";
    if (this.commitGid !== null) return "committing";
    return txn.status === "E" ? "failed" : "open";
  }

  /** What ReadyForQuery tells the client. */
  get status(): TransactionStatus {
    return this.transaction?.status ?? "I";
  }

  /** The identifier of the two-phase commit under way, or null. */
  get committingGid(): string | null {
    return this.commitGid;
  }

  /**
   * Opens a block. `beginSql` is replayed on every region the block reaches; `implicit` marks the
   * block of a string or batch, which ends with it unless the client's own BEGIN makes it explicit.
   */
  begin(beginSql: string, implicit: boolean, settingsBefore: SessionSettings): Transaction {
    if (this.transaction !== null) throw new Error("a transaction block is already open");
    this.transaction = new Transaction(beginSql, implicit, settingsBefore, this.legs.block);
    return this.transaction;
  }

  /** A statement failed inside the block (the proxy refused it, or a region's connection broke). */
  fail(): void {
    if (this.transaction !== null) this.transaction.failed = true;
  }

  /** ROLLBACK TO a savepoint: the proxy's own failure of the block is undone, as the server's is. */
  recover(): void {
    this.transaction?.recovered();
  }

  /** The two-phase commit of the block started (a gid) or ended (null). */
  committing(gid: string | null): void {
    this.commitGid = gid;
  }

  /**
   * The block is over: its connections lose their mark (the caller gives them back) and are
   * returned, oldest first.
   */
  end(): Leg[] {
    const legs = this.legs.block.clear();
    this.transaction = null;
    this.commitGid = null;
    return legs;
  }
}
