/**
 * What the analyser knows about functions by name. Names are matched without schema (a user
 * function shadowing one of these is treated like it, which errs towards the primary).
 */

/** Built-in aggregate functions (PostgreSQL 15-18). */
export const BUILTIN_AGGREGATES: ReadonlySet<string> = new Set([
  "count",
  "sum",
  "avg",
  "min",
  "max",
  "bool_and",
  "bool_or",
  "every",
  "bit_and",
  "bit_or",
  "bit_xor",
  "string_agg",
  "array_agg",
  "json_agg",
  "jsonb_agg",
  "json_agg_strict",
  "jsonb_agg_strict",
  "json_object_agg",
  "jsonb_object_agg",
  "json_object_agg_strict",
  "jsonb_object_agg_strict",
  "json_object_agg_unique",
  "jsonb_object_agg_unique",
  "json_object_agg_unique_strict",
  "jsonb_object_agg_unique_strict",
  "json_arrayagg",
  "json_objectagg",
  "xmlagg",
  "stddev",
  "stddev_pop",
  "stddev_samp",
  "variance",
  "var_pop",
  "var_samp",
  "corr",
  "covar_pop",
  "covar_samp",
  "regr_avgx",
  "regr_avgy",
  "regr_count",
  "regr_intercept",
  "regr_r2",
  "regr_slope",
  "regr_sxx",
  "regr_sxy",
  "regr_syy",
  "percentile_cont",
  "percentile_disc",
  "mode",
  "rank",
  "dense_rank",
  "percent_rank",
  "cume_dist",
  "range_agg",
  "range_intersect_agg",
  "any_value",
]);

/** Aggregates whose result is rebuilt exactly from per-region partials. */
export const DECOMPOSABLE_AGGREGATES: ReadonlySet<string> = new Set([
  "count",
  "sum",
  "avg",
  "min",
  "max",
  "bool_and",
  "bool_or",
  "every",
]);

/** Functions whose value changes from call to call (so evaluating them per region changes the answer). */
export const VOLATILE_FUNCTIONS: ReadonlySet<string> = new Set([
  "random",
  "random_normal",
  "setseed",
  "nextval",
  "setval",
  "currval",
  "lastval",
  "clock_timestamp",
  "timeofday",
  "statement_timestamp",
  "gen_random_uuid",
  "uuidv4",
  "uuidv7",
  "uuid_generate_v1",
  "uuid_generate_v1mc",
  "uuid_generate_v4",
  "txid_current",
  "pg_current_xact_id",
  "pg_sleep",
]);

/** Functions that write or need a transaction id, so a hot standby refuses them. */
export const WRITING_FUNCTIONS: ReadonlySet<string> = new Set([
  "nextval",
  "setval",
  "txid_current",
  "pg_current_xact_id",
  "pg_notify",
  "lo_create",
  "lo_creat",
  "lo_import",
  "lo_unlink",
  "lo_from_bytea",
  "lo_put",
  "lo_truncate",
  "lo_truncate64",
  "pg_logical_emit_message",
  "pg_switch_wal",
  "pg_create_restore_point",
  "pg_create_logical_replication_slot",
  "pg_drop_replication_slot",
]);

/** Advisory locks held until the session ends or they are released. */
export const SESSION_ADVISORY_LOCKS: ReadonlySet<string> = new Set([
  "pg_advisory_lock",
  "pg_advisory_lock_shared",
  "pg_try_advisory_lock",
  "pg_try_advisory_lock_shared",
  "pg_advisory_unlock",
  "pg_advisory_unlock_shared",
  "pg_advisory_unlock_all",
]);

/** Advisory locks released at the end of the transaction. */
export const TRANSACTION_ADVISORY_LOCKS: ReadonlySet<string> = new Set([
  "pg_advisory_xact_lock",
  "pg_advisory_xact_lock_shared",
  "pg_try_advisory_xact_lock",
  "pg_try_advisory_xact_lock_shared",
]);
