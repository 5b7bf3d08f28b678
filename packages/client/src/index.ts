/** Application-side read/write split with a replica health circuit, over postgres.js. */
export type { ClusterOptions, ReplicaEvent } from "./cluster.js";
export { Cluster, describeReplicaEvent } from "./cluster.js";
export { redactUrl, sameEndpoint } from "./dsn.js";
export type { ClusterDsns, Environment } from "./env.js";
export { clusterDsnsFromEnv, ENV_VARIABLES } from "./env.js";
export type { ClientErrorCode } from "./errors.js";
export { CLIENT_ERROR_CODES, ClientError } from "./errors.js";
export type { MigrateOptions, MigrateResult, Migration, Writable } from "./migrate.js";
export { migrate } from "./migrate.js";
export type { ProbeFunction, Sql } from "./probe.js";
export { selectOne } from "./probe.js";
export type { ReplicaHealth, ReplicaState } from "./replica-circuit.js";
export { REPLICA_STATES } from "./replica-circuit.js";
