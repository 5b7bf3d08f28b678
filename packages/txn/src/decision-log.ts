export const DECISIONS = ["commit", "abort"] as const;
export type Decision = (typeof DECISIONS)[number];

export interface DecisionRecord {
  readonly gid: string;
  readonly decision: Decision;
  /** Regions that were asked to prepare. */
  readonly participants: readonly string[];
  /** When the decision was written, milliseconds since the epoch. */
  readonly decidedAt: number;
}

/**
 * Where decisions become final. One decision per gid: the first one written wins and every later
 * attempt reads it back, so a slow coordinator and recovery can never decide differently.
 */
export interface DecisionLog {
  /**
   * Writes `record` durably unless a decision for its gid exists, and resolves with the decision that
   * holds (the one just written or the earlier one). Rejection means durability is unknown.
   */
  decide(record: DecisionRecord): Promise<DecisionRecord>;
  /** Every participant has acted on the decision; the record may be dropped by compaction. */
  complete(gid: string): Promise<void>;
  /** The decision for gid, completed or not, while the log still holds it. */
  lookup(gid: string): Promise<DecisionRecord | undefined>;
  /** Decisions not yet completed. */
  pending(): Promise<DecisionRecord[]>;
  /** Drops completed records (commits at once, aborts after their retention). */
  compact(): Promise<void>;
  close(): Promise<void>;
}
