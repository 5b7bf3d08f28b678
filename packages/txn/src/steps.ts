/**
 * The points of a distributed commit a test or a metric can observe, in protocol order. Hooks run
 * before the step named by a verb ("prepare", "decide", "commit-prepared") and after the one named by
 * a participle ("prepared", "decided", "committed-prepared").
 */
export const TXN_STEPS = [
  "prepare",
  "prepared",
  "prepare-refused",
  "decide",
  "decided",
  "commit-prepared",
  "committed-prepared",
  "commit-prepared-failed",
  "rollback",
  "completed",
  "aborted",
] as const;
export type TxnStep = (typeof TXN_STEPS)[number];

export interface TxnStepEvent {
  readonly step: TxnStep;
  readonly gid: string;
  /** Set for the steps that concern one participant. */
  readonly region?: string;
}

export const TXN_OUTCOMES = ["committed", "aborted", "in-doubt"] as const;
/**
 * How a distributed commit ended for the caller: committed everywhere; aborted (rolled back
 * everywhere, or left for recovery to roll back); or decided to commit with some regions still to
 * acknowledge, which recovery finishes (still a commit for the client: the decision is durable).
 */
export type TxnOutcome = (typeof TXN_OUTCOMES)[number];

/**
 * Observer of a coordinator. A hook that returns a promise holds the protocol at that point until it
 * settles, which is how tests freeze a coordinator mid-commit and kill it.
 */
export interface TxnObserver {
  onStep?(event: TxnStepEvent): void | Promise<void>;
  onOutcome?(outcome: TxnOutcome, gid: string): void;
}
