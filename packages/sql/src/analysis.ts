import type { IdColumn } from "./id-columns.js";
import type { TableChange } from "./table-changes.js";
/**
 * The public shape of a statement analysis. Everything here is plain data except the two lazily
 * built parts (`merge` and `insert.split`), which need the statement's own parse tree and are only
 * computed when a statement actually spans regions.
 *
 * These types are a contract with the planner (@geo/core): change them only by adding.
 */

/** What a statement is, as far as routing cares. */
export const STATEMENT_KINDS = [
  "select",
  "insert",
  "update",
  "delete",
  "merge",
  "copy",
  "explain",
  "ddl",
  "utility",
  "session",
  "transaction",
  "console",
  "empty",
] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** Why a statement may not go to a read-only replica. */
export const PRIMARY_REASONS = [
  "writes",
  "writing-cte",
  "locking-clause",
  "select-into",
  "writing-function",
  "advisory-lock",
  "call",
  "do-block",
  "explain-analyze-write",
  "ddl",
  "transaction-control",
  "hint",
  "unknown-statement",
  "listen-notify",
] as const;
export type PrimaryReason = (typeof PRIMARY_REASONS)[number];

/** Row locks taken by `SELECT ... FOR ...`, strongest first. */
export const LOCK_STRENGTHS = ["update", "no-key-update", "share", "key-share"] as const;
export type LockStrength = (typeof LOCK_STRENGTHS)[number];

// ---------------------------------------------------------------------------------------------
// Transaction control and session effects
// ---------------------------------------------------------------------------------------------

export const TRANSACTION_ACTIONS = [
  "begin",
  "commit",
  "rollback",
  "savepoint",
  "release",
  "rollback-to",
  "prepare",
  "commit-prepared",
  "rollback-prepared",
] as const;
export type TransactionAction = (typeof TRANSACTION_ACTIONS)[number];

export const ISOLATION_LEVELS = [
  "read-uncommitted",
  "read-committed",
  "repeatable-read",
  "serializable",
] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/** A transaction-control statement. `START TRANSACTION` is `begin`; `END` and `ABORT` are commit/rollback. */
export interface TransactionControl {
  readonly action: TransactionAction;
  /** BEGIN/START ... READ ONLY (true) or READ WRITE (false); absent when not said. */
  readonly readOnly?: boolean;
  readonly isolation?: IsolationLevel;
  readonly deferrable?: boolean;
  /** Savepoint name (savepoint, release, rollback-to) or global identifier (the prepared forms). */
  readonly name?: string;
  /** COMMIT AND CHAIN / ROLLBACK AND CHAIN. */
  readonly chain?: boolean;
}

export const SESSION_EFFECT_KINDS = [
  "set",
  "reset",
  "set-config",
  "listen",
  "unlisten",
  "prepare",
  "execute",
  "deallocate",
  "declare-with-hold",
  "create-temp",
  "advisory-lock",
  "close-cursor",
  "discard",
  "load",
] as const;
export type SessionEffectKind = (typeof SESSION_EFFECT_KINDS)[number];

/**
 * Something that outlives the statement on the server connection, so a pooled connection must be
 * reset (or kept for this client) afterwards.
 */
export interface SessionEffect {
  readonly kind: SessionEffectKind;
  /**
   * Setting, channel, prepared-statement, cursor or table name. Absent when it applies to all
   * (RESET ALL, UNLISTEN *, DEALLOCATE ALL, DISCARD ALL) or is not a literal (set_config($1, ...)).
   */
  readonly name?: string;
  /** SET LOCAL / set_config(..., true): ends with the transaction, so no reset is needed after it. */
  readonly local: boolean;
  /** SET value as written (first value for lists); DISCARD target (all, plans, sequences, temp). */
  readonly value?: string;
}

// ---------------------------------------------------------------------------------------------
// Values, key constraints and the lattice
// ---------------------------------------------------------------------------------------------

/** Lexical origin of a literal, as PostgreSQL's grammar classifies the constant. */
export const LITERAL_TYPES = ["string", "integer", "numeric", "boolean", "bit-string", "null"] as const;
export type LiteralType = (typeof LITERAL_TYPES)[number];

/**
 * One possible value of a key column.
 * - `literal`: `text` is the value in normal string form ('alice' -> `alice`, 42 -> `42`, -1 -> `-1`),
 *   `cast` the type name when written with a cast (`'5'::int8` -> `int8`).
 * - `param`: the value bound to `$index` (1-based), known at Bind.
 * - `param-array`: every element of the array bound to `$index` (`= ANY($1)`).
 */
export type KeyValue =
  | { readonly kind: "literal"; readonly type: LiteralType; readonly text: string; readonly cast?: string }
  | { readonly kind: "param"; readonly index: number; readonly cast?: string }
  | { readonly kind: "param-array"; readonly index: number; readonly cast?: string };

/**
 * The lattice value for one table occurrence's key column.
 * - `any`: nothing known, every key possible (top).
 * - `values`: the key is one of these values; an empty list means no row can match (bottom).
 * Over-approximation only: a constraint never excludes a key that a matching row could have.
 */
export type KeyConstraint =
  | { readonly kind: "any" }
  | { readonly kind: "values"; readonly values: readonly KeyValue[] };

// ---------------------------------------------------------------------------------------------
// Tables, query blocks, links
// ---------------------------------------------------------------------------------------------

/** Where a query block sits in the statement. */
export const BLOCK_ROLES = [
  "top",
  "cte",
  "subquery-from",
  "lateral",
  "sublink",
  "exists",
  "not-exists",
  "set-operand",
  "insert-source",
  "merge-source",
  "dml-from",
  "explained",
] as const;
export type BlockRole = (typeof BLOCK_ROLES)[number];

/**
 * One SELECT-level scope: its FROM list, its WHERE clause. Blocks are numbered in the order they
 * are met; block 0 is the statement itself.
 */
export interface QueryBlock {
  readonly id: number;
  readonly parent: number | undefined;
  readonly role: BlockRole;
  /** Refers to a table of an enclosing block (correlated subquery / LATERAL). */
  readonly correlated: boolean;
  /** Computes aggregates or GROUP BY (so its rows are not rows of its tables). */
  readonly aggregates: boolean;
  /** Writing CTE or the DML target block. */
  readonly writes: boolean;
}

export const TABLE_ACCESS = ["read", "write"] as const;
export type TableAccess = (typeof TABLE_ACCESS)[number];

/** One occurrence of a table in the statement (a table joined twice appears twice). */
export interface TableRef {
  /** Schema as written; absent when unqualified. */
  readonly schema?: string;
  /** Relation name, case-folded as PostgreSQL does (quoted names keep their case). */
  readonly name: string;
  /** FROM ONLY: inheritance children / partitions excluded. */
  readonly only: boolean;
  readonly alias?: string;
  readonly block: number;
  /** `write` for the target of INSERT/UPDATE/DELETE/MERGE/COPY FROM/TRUNCATE (which may also read). */
  readonly access: TableAccess;
  /** The key column from the analyser's schema info; absent for tables it has no key for. */
  readonly keyColumn?: string;
  /** Constraint on the key column from this occurrence's own block (and equalities flowing in). */
  readonly key: KeyConstraint;
}

/**
 * Key-to-key equality between two table occurrences (indices into `Analysis.tables`), from an ON
 * clause, a WHERE conjunct, USING, a correlated subquery, INSERT ... SELECT copying the key, or a
 * MERGE join condition. Rows that meet through a link have equal keys, so they live together.
 */
export interface KeyLink {
  readonly left: number;
  readonly right: number;
  readonly via: "join" | "where" | "correlation" | "insert-select" | "merge";
}

/** Rows from several occurrences that meet other than through a key link (a join on other columns). */
export interface CrossJoin {
  readonly left: number;
  readonly right: number;
}

/**
 * A maintenance command: VACUUM, ANALYZE, CHECKPOINT, REINDEX, CLUSTER, CREATE or DROP INDEX
 * CONCURRENTLY, LOCK TABLE and REFRESH MATERIALIZED VIEW. Each region's copy of a table is its own PostgreSQL table, so the command has to
 * run in every region that holds one; several of these PostgreSQL refuses inside a transaction
 * block, so they cannot be one distributed transaction either.
 */
export interface Maintenance {
  /**
   * The command as PostgreSQL names it in `... cannot run inside a transaction block`: `VACUUM`,
   * `ANALYZE`, `CREATE INDEX CONCURRENTLY`, `REINDEX DATABASE`, `CLUSTER`, ...
   */
  readonly name: string;
  /** PostgreSQL refuses it inside a transaction block (SQLSTATE 25001). */
  readonly outsideBlock: boolean;
  /** PostgreSQL accepts it only inside a transaction block (SQLSTATE 25P01): LOCK TABLE. */
  readonly blockOnly?: boolean;
  /**
   * `tables`: it acts on the analysis' tables (which it lists). `everywhere`: on every region,
   * because it names no table (VACUUM, CHECKPOINT, REINDEX DATABASE) or names an index, whose
   * table the text does not say.
   */
  readonly scope: "tables" | "everywhere";
  /** The index CREATE INDEX CONCURRENTLY names, when it names one (for messages that say how to resume). */
  readonly index?: string;
}

export interface StatementFlags {
  /** UPDATE/MERGE/INSERT ... ON CONFLICT DO UPDATE sets a table's key column. */
  readonly assignsKey: boolean;
  /** Names of volatile functions called (random, nextval, clock_timestamp, gen_random_uuid, ...). */
  readonly volatileFunctions: readonly string[];
  /**
   * Functions called that PostgreSQL does not define itself (a name outside pg_catalog, or one
   * qualified by another schema), as `name` or `schema.name`: their bodies may read any table.
   * Aggregates the analyser was told about are not listed.
   */
  readonly userFunctions: readonly string[];
  /** Strongest row lock of a locking clause anywhere in the statement. */
  readonly locking: LockStrength | undefined;
  /** SELECT ... INTO new_table. */
  readonly selectInto: boolean;
  /** A data-modifying WITH query. */
  readonly writingCte: boolean;
  /** RETURNING present. */
  readonly returning: boolean;
}

// ---------------------------------------------------------------------------------------------
// INSERT ... VALUES rows
// ---------------------------------------------------------------------------------------------

export interface InsertRows {
  /** Index into `Analysis.tables` of the target. */
  readonly table: number;
  /** Target column list as written; absent when omitted (table order). */
  readonly columns?: readonly string[];
  /** Position of the key column in each VALUES row; absent when not present or unknown. */
  readonly keyPosition?: number;
  /** The key of each VALUES row, in order; `undefined` where the key is an expression or DEFAULT. */
  readonly rowKeys: readonly (KeyValue | undefined)[];
  readonly onConflict: "none" | "nothing" | "update";
  /**
   * Rebuilds the INSERT with only the given rows (0-based VALUES positions), from the parse tree.
   * RETURNING rows of the result come back in the order of `rows`.
   */
  split(rows: readonly number[]): string;
}

// ---------------------------------------------------------------------------------------------
// Hints
// ---------------------------------------------------------------------------------------------

/** From a leading `/* geo: ... *\/` comment only. */
export interface Hints {
  readonly key?: string;
  readonly region?: string;
  readonly primary: boolean;
}

// ---------------------------------------------------------------------------------------------
// The merge plan
// ---------------------------------------------------------------------------------------------

/** A LIMIT/OFFSET operand: a constant or a bound parameter. `undefined` count = no limit. */
export type RowCount =
  | { readonly kind: "constant"; readonly value: number }
  | { readonly kind: "param"; readonly index: number };

export interface LimitSpec {
  readonly count: RowCount | undefined;
  readonly offset: RowCount | undefined;
}

/**
 * PostgreSQL type names whose values the proxy compares exactly by itself. A sort key of another type
 * (text in a collation, timestamps, ...) is finished in the home region instead.
 */
export const EXACT_SORT_TYPES = [
  "int2",
  "int4",
  "int8",
  "oid",
  "numeric",
  "float4",
  "float8",
  "bool",
  "uuid",
] as const;
export type ExactSortType = (typeof EXACT_SORT_TYPES)[number];

/** Type OIDs of `EXACT_SORT_TYPES`, to check a RowDescription without a name lookup. */
export const EXACT_SORT_TYPE_OIDS: ReadonlySet<number> = new Set([21, 23, 20, 26, 1700, 700, 701, 16, 2950]);

export interface SortKey {
  /** Name of the hidden column carrying this key (`__geo_sort_<i>`). */
  readonly column: string;
  /** 0-based position counted from the end of the row: hidden columns are the last `hiddenColumns`. */
  readonly fromEnd: number;
  readonly descending: boolean;
  /** PostgreSQL's default: NULLS LAST for ASC, NULLS FIRST for DESC. */
  readonly nullsFirst: boolean;
  /** `COLLATE` written in the ORDER BY: then only the home finish is exact. */
  readonly collation?: string;
}

/** A column type as named from the RowDescription (format_type), e.g. `int8`, `numeric`, `text`. */
export type TypeName = string;

/**
 * The home-region statement over the regions' rows or partials, shipped as one typed array per
 * column. Array parameters are numbered from `firstParam` (after the statement's own parameters).
 */
export interface HomeFinish {
  /** Names of the shipped columns, in parameter order. */
  readonly columns: readonly string[];
  readonly firstParam: number;
  /**
   * Builds the finish statement given the shipped columns' type names (same order as `columns`).
   * When `columns` is empty (an ordered plan ships whole rows) pass every column's type in
   * RowDescription order, hidden sort columns included, and the visible columns' names. A column
   * whose type is an array is bound as `text[]` holding each value's text form.
   */
  render(types: readonly TypeName[], names?: readonly string[]): string;
}

/** Tier 1: rows, concatenated as they come (optionally truncated by LIMIT/OFFSET). */
export interface ConcatPlan {
  readonly tier: "concat";
  readonly regionSql: string;
  readonly limit: LimitSpec | undefined;
  readonly movesRowData: false;
}

/**
 * Tier 1: ORDER BY [LIMIT/OFFSET]. Each region returns its first count+offset rows with the sort
 * keys as hidden trailing columns. The proxy merges in order when every hidden column's type is in
 * `EXACT_SORT_TYPES` and no key has a collation; otherwise the rows go to `homeFinish`.
 */
export interface OrderedPlan {
  readonly tier: "ordered";
  readonly regionSql: string;
  readonly sortKeys: readonly SortKey[];
  readonly hiddenColumns: number;
  readonly limit: LimitSpec | undefined;
  /** Always exact: used when the proxy cannot compare the keys itself. Moves rows out of regions. */
  readonly homeFinish: HomeFinish;
  /** Only when the home finish is used. */
  readonly movesRowData: true;
}

/** Tier 2: partial aggregates per region, finished by PostgreSQL in the home region. */
export interface PartialAggregatePlan {
  readonly tier: "partial-aggregate";
  readonly regionSql: string;
  readonly homeFinish: HomeFinish;
  /** Aggregates were split into these partial kinds (for explain and metrics). */
  readonly partials: readonly string[];
  /** DISTINCT aggregates ship each group's distinct values: per-row data leaves the region. */
  readonly movesRowData: boolean;
}

/** One table of a gather: the rows and columns the statement needs, filters pushed down. */
export interface GatherSource {
  /** Index into `Analysis.tables`. */
  readonly table: number;
  readonly regionSql: string;
  /** Columns shipped; `all` when the statement needs every column (`*`). */
  readonly columns: readonly string[] | "all";
}

/** Shipped rows of one gather source, as described by the regions' RowDescription. */
export interface ShippedRelation {
  readonly table: number;
  readonly columns: readonly { readonly name: string; readonly type: TypeName }[];
}

/** Tier 3: ship the needed rows home and run the original statement there over them. */
export interface GatherPlan {
  readonly tier: "gather";
  readonly sources: readonly GatherSource[];
  /** Why partials were not enough (for explain). */
  readonly reason: string;
  /**
   * Builds the home statement: each shipped table replaced by `unnest($k::type[], ...)` of its rows;
   * tables not listed in `shipped` (replicated ones) stay as they are. Parameters start at `firstParam`.
   */
  readonly firstParam: number;
  render(shipped: readonly ShippedRelation[]): string;
  readonly movesRowData: true;
}

/** Tier 4: no exact way to combine it. */
export interface RefusedPlan {
  readonly tier: "refused";
  readonly sqlstate: "0A000";
  readonly reason: string;
  readonly hint: string;
  readonly movesRowData: false;
}

/** Writes scattered verbatim: each region applies it to its rows; RETURNING rows concatenated. */
export interface ScatterWritePlan {
  readonly tier: "scatter-write";
  readonly regionSql: string;
  readonly movesRowData: false;
}

export type MergePlan =
  | ConcatPlan
  | OrderedPlan
  | PartialAggregatePlan
  | GatherPlan
  | RefusedPlan
  | ScatterWritePlan;
export type MergeTier = MergePlan["tier"];

// ---------------------------------------------------------------------------------------------
// Console commands
// ---------------------------------------------------------------------------------------------

/**
 * A console command: a statement the embedding answers itself, which PostgreSQL's grammar cannot
 * read (or would read as something else: `SHOW REGIONS` is a setting called "regions" to it).
 * This package knows no console words; a `ConsoleReader` given to the analyzer says which texts
 * are console commands.
 */
export interface ConsoleCommand {
  /**
   * The embedding's name for the command: its words in lower case joined by `-`
   * (`show-in-doubt`, `relocate`). Errors write it back in capitals with spaces (`SHOW IN DOUBT`).
   */
  readonly command: string;
  /** Text after the command words, trimmed, trailing semicolon removed. */
  readonly argument: string;
  /**
   * True for a command that changes what the embedding does (moves rows, drains a server). Such a
   * command is refused in a multi-statement query: the query's implicit transaction could not undo
   * it along with the statements around it.
   */
  readonly changesProxyState: boolean;
}

/**
 * Recognises an embedding's console commands, for `AnalyzerOptions.console`. Both methods run
 * before PostgreSQL's parser on statements the analyzer has not cached, so they must be cheap for
 * ordinary SQL: look at the first character before running any regular expression.
 *
 * @example
 * const reader: ConsoleReader = {
 *   read: (text) =>
 *     /^\s*show\s+widgets\s*;?\s*$/i.test(text)
 *       ? { command: "show-widgets", argument: "", changesProxyState: false }
 *       : undefined,
 *   mayHold: (text) => /\bshow\s+widgets\b/i.test(text),
 * };
 * const analyzer = await Analyzer.create({ keyColumns: new Map(), console: reader });
 * analyzer.analyze("SHOW WIDGETS").kind; // "console"
 */
export interface ConsoleReader {
  /** The console command `text` (one statement, leading comments included) is, or undefined for SQL. */
  read(text: string): ConsoleCommand | undefined;
  /**
   * Whether a multi-statement string may hold a console command. Only a string for which this is
   * true is cut into statements to look for one; it may say yes wrongly, never no wrongly.
   */
  mayHold(text: string): boolean;
}

// ---------------------------------------------------------------------------------------------
// The analysis
// ---------------------------------------------------------------------------------------------

export interface Analysis {
  /** This statement's text (without the batch's other statements). */
  readonly text: string;
  readonly kind: StatementKind;
  /** PostgreSQL's command name (`SELECT`, `CREATE TABLE`, `SET`, ...), useful for explain and tags. */
  readonly command: string;
  /** True when a read-only replica could run it. */
  readonly readOnly: boolean;
  /** Set when it must run on a primary; the first reason found. */
  readonly needsPrimary: PrimaryReason | undefined;
  readonly transaction?: TransactionControl;
  readonly sessionEffects: readonly SessionEffect[];
  readonly blocks: readonly QueryBlock[];
  readonly tables: readonly TableRef[];
  readonly links: readonly KeyLink[];
  /** Occurrences of tables combined on something other than equal keys. */
  readonly crossJoins: readonly CrossJoin[];
  readonly flags: StatementFlags;
  readonly insert?: InsertRows;
  readonly hints: Hints;
  /** Highest `$n` used (0 when none). */
  readonly paramCount: number;
  /** Kind `console`: the command the analyzer's `ConsoleReader` recognised. */
  readonly console?: ConsoleCommand;
  /** EXPLAIN: whether ANALYZE was given (then the statement runs). */
  readonly explain?: { readonly analyze: boolean };
  /** How to combine this statement's answer when it runs in several regions. Built on first read. */
  readonly merge: MergePlan;
  /**
   * The gather fallback (tier 3): used when the planner finds that tables of the statement are not
   * co-located (a `crossJoins` pair of geo-partitioned tables), so no region can answer for its own
   * rows. Refused when the statement writes or locks. Built on first read.
   */
  readonly gather: GatherPlan | RefusedPlan;
  /** MERGE: its WHEN actions in order (an INSERT action writes rows whose keys come from the source). */
  readonly mergeActions?: readonly ("update" | "delete" | "insert" | "nothing")[];
  /** A maintenance command, run in each region that holds its tables (see `Maintenance`). */
  readonly maintenance?: Maintenance;
  /** DDL: the columns it gives ids from a sequence (serial, identity, nextval); read on first use. */
  readonly idColumns?: readonly IdColumn[];
  /** DDL: renames, schema moves and column drops or retypes of tables; read on first use. */
  readonly tableChanges?: readonly TableChange[];
  /**
   * The text could not be parsed but a `region=` hint sends it somewhere anyway: treat it as a write
   * that may touch any geo-partitioned table.
   */
  readonly unparsed?: boolean;
}

/** What `Analyzer` needs to know about the schema. Fixed for the analyzer's lifetime (the cache relies on it). */
export interface SchemaInfo {
  /**
   * Key column per table, keyed by `name` or `schema.name` (qualified entries win). Tables not
   * listed have no key (replicated, pinned or unknown): the planner decides with its placement.
   */
  readonly keyColumns: ReadonlyMap<string, string>;
  /** User-defined aggregate names (lower case), never computed per region and concatenated. */
  readonly aggregates?: ReadonlySet<string>;
  /**
   * The shard keys' type (`[routing] key_type`): key values are compared as PostgreSQL compares
   * them with a column of this type (`'05'` and `5.0` are the integer 5). Default `text`.
   */
  readonly keyType?: "text" | "integer";
}

export interface AnalyzerOptions extends SchemaInfo {
  /** Entries in the shape cache (LRU). Default 4096; 0 disables caching. */
  readonly cacheSize?: number;
  /**
   * Recognises the embedding's console commands, which then analyse as kind `console`. Without
   * one nothing is a console command: `SHOW REGIONS` is PostgreSQL's SHOW of a setting.
   */
  readonly console?: ConsoleReader;
}

export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Shapes whose normalised analysis disagreed with the original, so they are never cached. */
  readonly uncacheable: number;
  readonly size: number;
  readonly capacity: number;
}
