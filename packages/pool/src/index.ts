/**
 * @geo/pool: connections from geoproxy to its PostgreSQL backends. `BackendConnection` logs in as a
 * client and relays raw frames; `Pool` hands connections out one client at a time with bounded
 * waiting and resets them between clients; `PoolSet` keys pools by (endpoint, database, role).
 */

export {
  BackendConnection,
  ConnectionPhase,
  type ConnectOptions,
  type FrameReceiver,
  type ScramKeyCredentials,
  type SimpleQueryResult,
  type TransportUpgrade,
} from "./backend-connection.js";
export { POOL_ERRORS } from "./error-catalog.js";
export {
  backendAuthUnsupported,
  backendConnectFailed,
  backendConnectionLost,
  backendConnectTimeout,
  backendPasswordMissing,
  backendProtocolViolation,
  backendScramFailed,
  connectionUnusable,
  internalStatementTimeout,
  poolCheckoutTimeout,
  poolClosed,
  poolQueueFull,
  receiverFailed,
  replyInFlight,
} from "./errors.js";
export { type BackendEndpoint, BackendRole, endpointAddress } from "./health/backend-endpoint.js";
export { type BackendHealth, HealthState } from "./health/backend-health.js";
export {
  ConnectionProber,
  type ConnectionProberOptions,
  HEALTH_APPLICATION_NAME,
} from "./health/connection-prober.js";
export { type HealthAlert, HealthAlertKind } from "./health/health-alert.js";
export { type HealthClock, systemClock } from "./health/health-clock.js";
export {
  backendStoppedAnswering,
  backendUnreachable,
  drainNeedsReplica,
  duplicateBackend,
  duplicatePrimary,
  invalidLsn,
  probeAbandoned,
  probeAnswerUnexpected,
  probeStillRunning,
  probeTimedOut,
  regionPrimaryDown,
  unknownBackend,
  unknownRegion,
} from "./health/health-errors.js";
export { type HealthEvent, StateChangeCause } from "./health/health-event.js";
export { HealthMonitor, type HealthMonitorOptions } from "./health/health-monitor.js";
export { type HealthProber, PROBE_SQL, type ProbeReading } from "./health/health-prober.js";
export { formatLsn, parseLsn } from "./health/lsn.js";
export { type ReplicaChoice, type ReplicaChoiceOptions, ReplicaRefusal } from "./health/replica-choice.js";
export {
  type GuardedEndpoint,
  type HealthEvents,
  LIVENESS_APPLICATION_NAME,
  type UnreachableChange,
  UnreachableGuard,
  type UnreachableGuardOptions,
  unreachableBroken,
} from "./health/unreachable-guard.js";
export { WriteFence } from "./health/write-fence.js";
export { Lease, type ReleaseOptions } from "./lease.js";
export { Pool, type PoolCloseOptions, type PoolStats, SlotState } from "./pool.js";
export {
  type ConnectFunction,
  DEFAULT_POOL_CONFIG,
  type PoolConfig,
  type PoolCredentials,
  type PoolKey,
  type PoolOptions,
  poolName,
  type ResolvedPoolConfig,
} from "./pool-config.js";
export { PoolSet, type PoolSetOptions } from "./pool-set.js";
export { ResetKind, strongerReset } from "./reset-kind.js";
export {
  BACKEND_SSL_MODES,
  type BackendSslMode,
  type BackendTlsOptions,
  backendTlsUpgrade,
} from "./tls/backend-tls.js";
export { backendTlsBadAnswer, backendTlsHandshakeFailed, backendTlsRefused } from "./tls/tls-errors.js";
export { WaiterQueue } from "./waiter-queue.js";
