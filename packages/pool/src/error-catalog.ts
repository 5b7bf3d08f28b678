import * as connectionErrors from "./errors.js";
import * as healthErrors from "./health/health-errors.js";
import * as tlsErrors from "./tls/tls-errors.js";

/**
 * Every error factory @geo/pool has, by name: the connection and pool errors, the health
 * monitor's, and those of TLS to a backend. Spread from the modules, so a factory added to one of
 * them is listed here without an edit, and docs/errors.md is checked against this list.
 */
export const POOL_ERRORS = { ...connectionErrors, ...healthErrors, ...tlsErrors } as const;
