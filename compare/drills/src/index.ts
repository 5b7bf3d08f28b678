/** Crash drills for writes through geoproxy: named scenarios, each under a keyed and a transfer workload. */
export {
  APP_USER,
  configToml,
  directoryTsv,
  INITIAL_BALANCE,
  KEYS,
  OPS_USER,
  REGIONS,
  SCHEMA_SQL,
} from "./bank.js";
export type { WorkloadResult } from "./check.js";
export { PROXY_CLI, ProxyProcess } from "./proxy-process.js";
export { TcpRelay } from "./relay.js";
export { markdownTable, reportRows, TABLE_COLUMNS } from "./report-table.js";
export {
  type DrillContext,
  type DrillOptions,
  type DrillReport,
  drillPassed,
  runDrill,
  type Scenario,
  type ScenarioSetup,
  SHARED_DIRECTORY,
} from "./run-drill.js";
export { SCENARIOS, scenarioNamed } from "./scenarios.js";
export { TWO_PHASE_POINTS, type TwoPhasePoint } from "./two-phase-points.js";
export { WRITE_OUTCOMES, type WriteOutcome } from "./workloads.js";
