/** A fixed list of statements answered by geoproxy over three regions, compared exactly with one PostgreSQL holding every row. */
export { type Answer, type AnswerError, BinarySession, TextSession } from "./answer.js";
export { dataSql, directoryTsv, SCHEMA_SQL, TENANTS, TICKS_PER_REGION } from "./dataset.js";
export { type Grade, grade, REFUSAL_SQLSTATES, VERDICTS, type Verdict } from "./grade.js";
export { MERGE_ROWS, MERGE_SQL, type MergeMemoryResult, measureMergeMemory } from "./merge-memory.js";
export { formatReport } from "./report.js";
export {
  describeGraded,
  type FidelityReport,
  type GradedStatement,
  RESULT_FORMATS,
  type ResultFormat,
  runFidelity,
} from "./run-fidelity.js";
export { FAMILIES, type Family, type FidelityStatement, STATEMENTS } from "./statements.js";
export { type Endpoint, type FidelityWorld, fidelityConfigToml, startFidelityWorld } from "./world.js";
