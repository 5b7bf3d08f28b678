/** Generated statements graded through geoproxy against one PostgreSQL holding every row. */
export { generateStatement, generateStatements } from "./generator.js";
export { compareResults, type Grade, grade, REFUSAL_SQLSTATES, VERDICTS, type Verdict } from "./grade.js";
export { type OracleWorld, oracleConfigToml, startOracleWorld } from "./oracle-world.js";
export { ScriptClient, type ScriptOutcome, type StepError, type StepResult } from "./outcome.js";
export { Prng } from "./prng.js";
export { formatReport } from "./report.js";
export { describeFailure, type GradedStatement, type OracleReport, runOracle } from "./run-oracle.js";
export { dataSql, directoryTsv, SCHEMA_SQL, TENANTS } from "./schema.js";
export { FAMILIES, type Family, type OracleStatement, type Step, statementText } from "./statement.js";
