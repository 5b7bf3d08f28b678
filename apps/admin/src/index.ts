/** Admin HTTP port: Prometheus metrics, snapshot, key lookup, health, live dashboard. */
export { CONTENT_SECURITY_POLICY, DASHBOARD_SCRIPT, DASHBOARD_SCRIPT_HASH } from "./dashboard/assets.js";
export { ADMIN_ERROR_CODES, AdminError, type AdminErrorCode } from "./errors/admin-errors.js";
export {
  DEFAULT_LATENCY_BUCKETS,
  type MetricCollectors,
  ProxyMetrics,
  type ProxyMetricsOptions,
} from "./metrics/proxy-metrics.js";
export { isLoopbackHost } from "./server/loopback.js";
export { DEFAULT_LOCKOUT, type LockoutPolicy } from "./server/password-gate.js";
export {
  type AdminLogger,
  type AdminServerOptions,
  type RunningAdminServer,
  startAdminServer,
} from "./server/start-admin-server.js";
export type {
  AdminSource,
  Alert,
  CacheStatus,
  ClientStatus,
  EndpointStatus,
  InDoubtTransaction,
  KeyLocation,
  KeyLookupFailure,
  LatencySummary,
  MoveInProgress,
  PlacementRegion,
  PlacementStatus,
  PoolStatus,
  ProxySnapshot,
  RefusedShape,
  RegionStatus,
  RouteDecision,
  SchemaDriftRegion,
  SchemaDriftStatus,
  SchemaDriftTable,
  SharedDirectoryStatus,
  SharedPeer,
  TrafficCounts,
  TransactionStatus,
} from "./source/admin-source.js";
export {
  BACKEND_HEALTHS,
  type BackendHealth,
  ENDPOINT_ROLES,
  type EndpointRole,
  KEY_STATES,
  type KeyState,
  LEASE_STATES,
  type LeaseState,
  PLAN_KINDS,
  type PlanKind,
  READ_FINISHES,
  type ReadFinish,
  TRANSACTION_OUTCOMES,
  type TransactionOutcome,
} from "./source/kinds.js";
