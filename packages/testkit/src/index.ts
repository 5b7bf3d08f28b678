/** Fake PostgreSQL backend on a real socket and a launcher for real PostgreSQL servers. */

export type { RawConnectOptions, RawQueryResult } from "./client/raw-client.js";
export { RawClient } from "./client/raw-client.js";
export { isPortOpen } from "./cluster/free-port.js";
export type { PgCluster, PgServer, StartClusterOptions } from "./cluster/pg-cluster.js";
export { startCluster } from "./cluster/pg-cluster.js";
export type { PostgresBinaries } from "./cluster/postgres-binaries.js";
export { findPostgresBinaries, PostgresMissingError } from "./cluster/postgres-binaries.js";
export type { PgReplica, StartReplicaOptions } from "./cluster/replica.js";
export { startReplica } from "./cluster/replica.js";
export type {
  FakeAuth,
  FakeBackendOptions,
  FakeConnection,
  FakeFailures,
  RecordedStatement,
} from "./fake/fake-backend.js";
export { FakeBackend } from "./fake/fake-backend.js";
export type {
  FakeColumn,
  FakeContext,
  FakeHandler,
  FakeParams,
  FakeReply,
  FakeRule,
  FakeValue,
  StatementMatcher,
} from "./fake/script.js";
export { splitStatements } from "./fake/split-statements.js";
export type {
  TestCertificates,
  TestCertificatesOptions,
  TestServerCertificate,
} from "./tls/test-certificates.js";
export { makeTestCertificates } from "./tls/test-certificates.js";
