/** Statement analysis: parse, tables, keys, session effects, merge plans, rewrites, cache. */
export type {
  Analysis,
  AnalyzerOptions,
  BlockRole,
  CacheStats,
  ConcatPlan,
  ConsoleCommand,
  ConsoleReader,
  CrossJoin,
  ExactSortType,
  GatherPlan,
  GatherSource,
  Hints,
  HomeFinish,
  InsertRows,
  IsolationLevel,
  KeyConstraint,
  KeyLink,
  KeyValue,
  LimitSpec,
  LiteralType,
  LockStrength,
  Maintenance,
  MergePlan,
  MergeTier,
  OrderedPlan,
  PartialAggregatePlan,
  PrimaryReason,
  QueryBlock,
  RefusedPlan,
  RowCount,
  ScatterWritePlan,
  SchemaInfo,
  SessionEffect,
  SessionEffectKind,
  ShippedRelation,
  SortKey,
  StatementFlags,
  StatementKind,
  TableAccess,
  TableRef,
  TransactionAction,
  TransactionControl,
  TypeName,
} from "./analysis.js";
export {
  BLOCK_ROLES,
  EXACT_SORT_TYPE_OIDS,
  EXACT_SORT_TYPES,
  ISOLATION_LEVELS,
  LITERAL_TYPES,
  LOCK_STRENGTHS,
  PRIMARY_REASONS,
  SESSION_EFFECT_KINDS,
  STATEMENT_KINDS,
  TABLE_ACCESS,
  TRANSACTION_ACTIONS,
} from "./analysis.js";
export { Analyzer, initSql } from "./analyzer.js";
export type { SqlErrorCode } from "./errors.js";
export { SQL_ERROR_CODES, SqlAnalysisError, VALID_HINT_FORMS } from "./errors.js";

export const packageName = "@geo/sql";
export {
  COPY_FORMATS,
  type CopyFormat,
  type CopyOptions,
  type CopyStatement,
  copyStatement,
} from "./copy-statement.js";
export { RewriteMismatch } from "./deparse.js";
export { BINARY_SCALAR_NAMES } from "./home-relation.js";
export { type IdColumn, idColumns } from "./id-columns.js";
export { insertColumnCount, insertWithColumns } from "./insert-columns.js";
export { preparedStatementText } from "./prepared-text.js";
export { qualifyTables, unqualifiedTables } from "./qualified-tables.js";
export {
  bindSqlExecute,
  type ParameterType,
  type SqlExecuteBinding,
  type SqlPrepared,
} from "./sql-execute.js";
export { type TableChange, tableChanges } from "./table-changes.js";
export { isTemporarySchema } from "./temporary-objects.js";
export {
  type PrereadAnswer,
  type WritePreread,
  type WritePrereads,
  writePrereads,
} from "./write-prereads.js";
