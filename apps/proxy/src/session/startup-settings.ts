import type { Lease } from "@geo/pool";
import { PgError, Severity, SqlState } from "@geo/proto";
import { quoteLiteral } from "./session-settings.js";

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

/** How many distinct sets of startup settings are remembered as valid, per pool set. */
const REMEMBERED = 256;

const validated = new WeakMap<object, Set<string>>();

/**
 * Checks the settings a client gave in its StartupMessage (parameters and `-c` options) the way
 * PostgreSQL checks them at connect, so a bad one ends the login with FATAL instead of failing
 * every statement later, when the proxy replays it on a pooled connection. The check is one
 * `set_config(name, value, true)` per setting in a single SELECT on a home-region connection:
 * local to the statement's own transaction, so the connection is left as it was. A set found
 * valid is remembered (per `scope`, bounded), so drivers that always send the same startup
 * parameters pay the round trip once.
 *
 * Settings PostgreSQL accepts only at connect (PGC_BACKEND, such as `log_connections`) fail
 * here ("cannot be changed now"): the proxy could not give them to pooled connections anyway.
 */
export async function checkStartupSettings(
  settings: readonly (readonly [string, string])[],
  scope: object,
  acquire: () => Promise<Lease>,
): Promise<PgError | null> {
  if (settings.length === 0) return null;
  const sql = `SELECT ${settings
    .map(([name, value]) => `pg_catalog.set_config(${quoteLiteral(name)}, ${quoteLiteral(value)}, true)`)
    .join(", ")}`;
  let known = validated.get(scope);
  if (known?.has(sql)) return null;
  let lease: Lease;
  try {
    lease = await acquire();
  } catch {
    // No connection to check with: the login goes on, and a bad setting fails its first statement.
    return null;
  }
  try {
    await lease.connection.simpleQuery(sql);
  } catch (error) {
    if (error instanceof PgError && SETTING_ERRORS.has(error.code)) {
      lease.release();
      return asFatal(error);
    }
    // Not about a setting (a lost connection, a server that cannot answer): no verdict.
    lease.discard("startup settings check failed");
    return null;
  }
  lease.release();
  if (known === undefined) {
    known = new Set();
    validated.set(scope, known);
  }
  if (known.size >= REMEMBERED) known.clear();
  known.add(sql);
  return null;
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
