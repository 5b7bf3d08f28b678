import type { Lease } from "@geo/pool";
import { PgError, Severity, SqlState } from "@geo/proto";
import { leaseWithin } from "../executor/lease-within.js";
import { shadowsPublic } from "../routing/search-path.js";
import { searchPathSchemas } from "./session-settings.js";
import { quoteLiteral } from "./settings/quote.js";
import { REPORTED_PARAMETERS } from "./startup.js";

/**
 * What PostgreSQL answers a bad setting with: an invalid value, an unknown parameter, one that
 * cannot be changed now, one the role may not set.
 */
const SETTING_ERRORS: ReadonlySet<string> = new Set([
  SqlState.invalid_parameter_value,
  SqlState.undefined_object,
  SqlState.cant_change_runtime_param,
  SqlState.insufficient_privilege,
]);

/** How many distinct logins (user and startup settings) are remembered, per pool set. */
const REMEMBERED = 256;

const remembered = new WeakMap<object, Map<string, ReadonlyMap<string, string>>>();

/**
 * Checks the settings a client gave in its StartupMessage (parameters and `-c` options) the way
 * PostgreSQL checks them at connect, so a bad one ends the login with FATAL instead of failing
 * every statement later, when the proxy replays it on a pooled connection; and answers what the
 * login reports: each GUC_REPORT parameter as the server itself reports it to this client
 * (normalised, `eucjp` is `EUC_JP`; the client's own session_authorization and is_superuser).
 *
 * One query string on a home-region connection of the client's user: inside a block that it
 * rolls back, RESET ALL (what another client left on the connection, and the proxy's own
 * application_name, are not this client's), one `set_config(name, value, true)` per setting, then
 * `current_setting` of every reported parameter. The connection is left as it was. An answer is
 * remembered (per `scope` and client role and database, bounded), so drivers that always send the same startup
 * parameters pay the round trip once.
 *
 * Settings PostgreSQL accepts only at connect (PGC_BACKEND, such as `log_connections`) fail
 * here ("cannot be changed now"): the proxy could not give them to pooled connections anyway.
 * Resolves with the reported values, an empty map when no server could say (the login goes on,
 * and a bad setting fails its first statement), or the FATAL error to end the login with. A server
 * that leaves the check unanswered for `timeoutMs` (`[pool] lookup_timeout_ms`: a frozen home
 * region) is one that could not say: its connection is destroyed, `onUnanswered` is told why, and
 * the login goes on, so clients of the other regions can still log in.
 */
export async function checkStartupSettings(
  settings: readonly (readonly [string, string])[],
  scope: object,
  acquire: () => Promise<Lease>,
  client = "",
  deadline: { readonly timeoutMs?: number; readonly onUnanswered?: (error: Error) => void } = {},
): Promise<PgError | ReadonlyMap<string, string>> {
  const sets = settings.map(
    ([name, value]) => `pg_catalog.set_config(${quoteLiteral(name)}, ${quoteLiteral(value)}, true)`,
  );
  const report = [
    ...REPORTED_PARAMETERS.map((name) => `pg_catalog.current_setting(${quoteLiteral(name)})`),
    ...SEARCH_PATH_COLUMNS,
  ];
  const sql = `BEGIN; RESET ALL; ${sets.length === 0 ? "" : `SELECT ${sets.join(", ")}; `}SELECT ${report.join(", ")}; ROLLBACK`;
  const key = `${client}\u0000${sql}`;
  let known = remembered.get(scope);
  const answer = known?.get(key);
  if (answer !== undefined) return answer;
  const started = Date.now();
  let lease: Lease;
  try {
    // The deadline covers the checkout too: it may reset a pooled connection first.
    lease =
      deadline.timeoutMs === undefined
        ? await acquire()
        : await leaseWithin(acquire, deadline.timeoutMs, () => unanswered(deadline.timeoutMs!));
  } catch (error) {
    // The server refused the client's database: the login fails as it would there (3D000).
    if (error instanceof PgError && error.code === SqlState.invalid_catalog_name) return asFatal(error);
    if (error instanceof PgError && error.code === SqlState.query_canceled) deadline.onUnanswered?.(error);
    return new Map();
  }
  const timeoutMs =
    deadline.timeoutMs === undefined ? undefined : Math.max(1, deadline.timeoutMs - (Date.now() - started));
  let reported: Map<string, string>;
  try {
    const result = await lease.connection.simpleQuery(sql, { timeoutMs });
    reported = new Map();
    const row = result.rows.length === 1 ? result.rows[0]! : [];
    if (row.length === report.length && row.every((value) => value !== null)) {
      for (const [i, name] of [...REPORTED_PARAMETERS, ...SEARCH_PATH_KEYS].entries())
        reported.set(name, row[i]!);
    }
  } catch (error) {
    if (error instanceof PgError && SETTING_ERRORS.has(error.code)) {
      await endBlock(lease, deadline.timeoutMs);
      return asFatal(error);
    }
    // Not about a setting (a lost connection, a server that cannot answer): no verdict.
    lease.discard("startup settings check failed");
    if (error instanceof PgError && error.code === SqlState.query_canceled) deadline.onUnanswered?.(error);
    return new Map();
  }
  await endBlock(lease, deadline.timeoutMs);
  if (reported.size === 0) return reported;
  if (known === undefined) {
    known = new Map();
    remembered.set(scope, known);
  }
  if (known.size >= REMEMBERED) known.clear();
  known.set(key, reported);
  return reported;
}

/**
 * What the check also reads of the role's starting search_path: its value (set by ALTER ROLE or
 * ALTER DATABASE ... SET, or the server's configuration), and the name of the schema `$user`
 * stands for when one of that name exists ('' when none does).
 */
const SEARCH_PATH_COLUMNS = [
  "pg_catalog.current_setting('search_path')",
  "CASE WHEN pg_catalog.to_regnamespace(pg_catalog.quote_ident(CURRENT_USER::text)) IS NULL THEN '' ELSE CURRENT_USER::text END",
];
const SEARCH_PATH_KEYS = ["search_path", "$user schema"];

/**
 * The schemas of the search_path a login starts with, as its server resolves names under it, when
 * that may resolve an unqualified name away from public (the planner's assumption): undefined when
 * it cannot (the usual `"$user", public` with no schema named after the role), or when the check
 * could not say. `$user` is the schema named after the server's role, left out where none exists,
 * as PostgreSQL leaves it out.
 */
export function startingSearchPath(reported: ReadonlyMap<string, string>): readonly string[] | undefined {
  const value = reported.get("search_path");
  const userSchema = reported.get("$user schema");
  if (value === undefined || userSchema === undefined) return undefined;
  const schemas = searchPathSchemas(`SET search_path TO ${value}`).flatMap((schema) =>
    schema !== "$user" ? [schema] : userSchema === "" ? [] : [userSchema],
  );
  return shadowsPublic(schemas) ? schemas : undefined;
}

/** Gives the connection back out of the check's block (its ROLLBACK was skipped after an error). */
async function endBlock(lease: Lease, timeoutMs: number | undefined): Promise<void> {
  if (lease.connection.txStatus !== "I") {
    try {
      await lease.connection.simpleQuery("ROLLBACK", { timeoutMs });
    } catch {
      lease.discard("startup settings check failed");
      return;
    }
  }
  lease.release();
}

/** The check could not even check out a connection within its deadline. */
function unanswered(timeoutMs: number): PgError {
  return new PgError({
    code: SqlState.query_canceled,
    message: `no home-region connection was ready for the check of the login's settings within ${timeoutMs} ms`,
  });
}

/** The backend's own error about a setting, raised to FATAL as PostgreSQL raises it at connect. */
function asFatal(error: PgError): PgError {
  return new PgError({
    code: error.code,
    message: error.message,
    severity: Severity.FATAL,
    ...(error.detail === undefined ? {} : { detail: error.detail }),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  });
}
