/** Crash drills for cross-region commits through geoproxy. */
export { configToml, directoryTsv, INITIAL_BALANCE, KEYS, REGIONS, SCHEMA_SQL } from "./bank.js";
export { PROXY_CLI, ProxyProcess } from "./proxy-process.js";
export {
  type DrillOptions,
  type DrillReport,
  runDrill,
  TRANSFER_OUTCOMES,
  type TransferOutcome,
} from "./run-drill.js";
