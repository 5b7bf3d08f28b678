/** Two-phase commit coordinator, decision log and recovery. */

export type {
  ClaimGuard,
  CommitOptions,
  CommitResult,
  CoordinatorOptions,
  CoordinatorStats,
  InDoubtTransaction,
  TxnPhase,
} from "./coordinator.js";
export { Coordinator, TXN_PHASES } from "./coordinator.js";
export type { Decision, DecisionLog, DecisionRecord } from "./decision-log.js";
export { DECISIONS } from "./decision-log.js";
export type { LockOwner, StaleLock, StaleLockReason } from "./decision-log-lock.js";
export { STALE_LOCK_REASONS } from "./decision-log-lock.js";
export { TXN_ERRORS } from "./error-catalog.js";
export {
  type ClaimHolder,
  decidedAbortElsewhere,
  decisionLogClosed,
  decisionLogCorrupt,
  decisionLogLocked,
  duplicateRegion,
  foreignGid,
  gidInUse,
  invalidPrefix,
  isConnectionFailure,
  isStepTimeout,
  nodeClaimedElsewhere,
  nodeClaimNotHeld,
  noParticipants,
  participantRefused,
  prepareRolledBack,
  prepareTimedOut,
  prepareTooSlow,
  prepareUnreachable,
  resolutionUnknown,
  sqlStateOf,
  stepTimedOut,
  TxnError,
} from "./errors.js";
export type { FileDecisionLogOptions } from "./file-decision-log.js";
export { FileDecisionLog } from "./file-decision-log.js";
export { GidFactory } from "./gid.js";
export type {
  ClaimChange,
  ClaimConnection,
  ClaimConnector,
  ClaimRefusal,
  ClaimResult,
  ClaimState,
  NodeClaimOptions,
} from "./node-claim.js";
export { CLAIM_STATES, claimKey, NodeClaim } from "./node-claim.js";
export type {
  Participant,
  ParticipantConnector,
  QueryResult,
  RecoveryConnection,
  SqlExecutor,
} from "./participant.js";
export type { RecoveryAction, RecoveryOptions, RecoveryReport } from "./recovery.js";
export { Recovery } from "./recovery.js";
export { connectWithin, queryWithin } from "./step-deadline.js";
export type { TxnObserver, TxnOutcome, TxnStep, TxnStepEvent } from "./steps.js";
export { TXN_OUTCOMES, TXN_STEPS } from "./steps.js";
export type { TableDecisionLogOptions } from "./table-decision-log.js";
export { TableDecisionLog } from "./table-decision-log.js";

export const packageName = "@geo/txn";
