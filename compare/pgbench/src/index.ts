/** The comparison kit's parts, exported for its tests; the kit itself runs as `bench/pgbench.ts`. */
export { failureNotes } from "./failure-notes.js";
export { type BenchOptions, parseOptions, USAGE, UsageError } from "./options.js";
export { parseTransactionLog } from "./pgbench-log.js";
export { type PgbenchSummary, parsePgbenchOutput } from "./pgbench-output.js";
export { type PgbenchRun, pgbenchFailureReason } from "./pgbench-run.js";
export { cpuSecondsOfTree, parseProcStat } from "./proc-cpu.js";
export { type CellSummary, type ReportInput, ratio, renderReport, summarizeCell } from "./report.js";
export { median, percentileOfSorted, spread, summarizeLatencies } from "./stats.js";
export { geoproxyConfigToml } from "./targets/geoproxy.js";
export { findPgbouncer, PgbouncerMissingError, pgbouncerIni } from "./targets/pgbouncer.js";
export { TARGET_NAMES, type TargetName } from "./targets/target.js";
export { pgbenchRunArgs, WORKLOAD_NAMES, type WorkloadName, workload } from "./workloads.js";
