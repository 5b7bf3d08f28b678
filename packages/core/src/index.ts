/** Configuration, topology, placement, key directory, hash, planner, explain. */
export { DECISION_LOGS, DEFAULTS, KEY_TYPES, PLACEMENTS, RESIDENCIES } from "./config/defaults.js";
export { loadConfig } from "./config/load-config.js";
export type { Routing } from "./config/load-routing.js";
export { loadRouting } from "./config/load-routing.js";
export { parseConfig } from "./config/parse-config.js";
export { regionTimeouts } from "./config/region-timeouts.js";
export type {
  AdminConfig,
  AuthConfig,
  AuthMethod,
  AuthUser,
  DecisionLogKind,
  DefaultPlacement,
  DirectoryConfig,
  DirectoryStoreConfig,
  Endpoint,
  GatherConfig,
  GeoConfig,
  KeyType,
  NetworkTimeouts,
  Placement,
  PoolConfig,
  RegionConfig,
  RegionId,
  Residency,
  RoutingConfig,
  ServerConfig,
  SslMode,
  TablePolicy,
  TlsConfig,
  TxnConfig,
  WorkerCount,
} from "./config/types.js";
export type { WorkersConflict } from "./config/workers.js";
export { checkWorkers, MAX_WORKERS, resolveWorkers, workersConflict } from "./config/workers.js";
export type { Directory, MutableDirectory } from "./directory/directory.js";
export { loadDirectoryTsv, parseDirectoryTsv } from "./directory/directory-tsv.js";
export { MemoryDirectory } from "./directory/memory-directory.js";
export type { ConfigErrorCode, ConfigErrorFields } from "./errors/config-error.js";
export { CONFIG_ERROR_CODES, ConfigError } from "./errors/config-error.js";
export type { Hash64 } from "./hash/pg-hash.js";
export {
  hashBytesExtended,
  hashInt8Extended,
  hashInt8ExtendedParts,
  hashTextExtended,
  hashTextExtendedParts,
  hashUint32Extended,
  toSignedInt64,
  unsignedModulo,
} from "./hash/pg-hash.js";
export { canonicalKey, keyHash, placeKey, shardFor } from "./topology/placement.js";
export { compareIds, Topology } from "./topology/topology.js";

export const packageName = "@geo/core";
export { REFUSALS } from "./errors/refusal-catalog.js";
export type { Refusal, RefusalCode } from "./errors/refusals.js";
export {
  REFUSAL_CODES,
  refuseConfiguredTableChange,
  refuseCopyAcrossRegions,
  refuseCreateFromRowsAcrossRegions,
  refuseCrossRegionJoin,
  refuseCursorAcrossRegions,
  refuseExplainAcrossRegions,
  refuseHintWritesElsewhere,
  refuseKeyUpdate,
  refuseReplicatedWriteFromRows,
  refuseReplicatedWriteVolatile,
  refuseResidency,
  refuseSequenceIds,
  refuseSingleCopyWriteAcrossRegions,
  refuseUncombinable,
  refuseUnknownRegionHint,
  refuseUnplaceableInsertRow,
  refuseUnplacedTable,
  refuseUnsplittableInsert,
  refuseUtilityAcrossRegions,
  refuseWriteReadsElsewhere,
  refuseWritingCteAcrossRegions,
} from "./errors/refusals.js";
export type { ExplainOptions } from "./explain/explain.js";
export { explain, formatPlan } from "./explain/explain.js";
export { parseArrayLiteral } from "./planner/array-literal.js";
export type {
  AccessMode,
  DeferredPlan,
  DistributedWritePlan,
  EachRegionPlan,
  LocalPlan,
  Plan,
  PlanKind,
  RefusedPlan,
  RegionStatement,
  ScatterPlan,
  SinglePlan,
} from "./planner/plan.js";
export { ACCESS_MODES, PLAN_KINDS } from "./planner/plan.js";
export type { ParamValue, PlanContext } from "./planner/planner.js";
export { plan } from "./planner/planner.js";
export { schemaInfoFor } from "./planner/schema-info.js";
export { MAX_REGIONS } from "./topology/topology.js";
