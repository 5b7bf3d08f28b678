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
export { WaiterQueue } from "./waiter-queue.js";
