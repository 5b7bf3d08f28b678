import * as authErrors from "../auth/auth-errors.js";
import * as consoleErrors from "../console/console-errors.js";
import { moveNeedsSimpleQuery } from "../console/relocate.js";
import { notShared } from "../console/show-peers.js";
import * as copyInErrors from "../copy/copy-errors.js";
import * as sharedErrors from "../directory/shared-errors.js";
import * as copyErrors from "../distributed/copy-errors.js";
import * as txnErrors from "../distributed/txn-errors.js";
import * as restripeErrors from "../ids/restripe-errors.js";
import * as maintenanceErrors from "../maintenance/maintenance-errors.js";
import * as moveErrors from "../moves/move-errors.js";
import * as replicaErrors from "../replicas/replica-errors.js";
import * as scatterErrors from "../scatter/errors.js";
import * as valueErrors from "../scatter/value-errors.js";
import * as catalog from "./catalog.js";

// These two only carry errors catalogued where they are made: @geo/core's refusals and @geo/sql's
// analysis errors.
const { fromRefusal: _fromRefusal, fromAnalysisError: _fromAnalysisError, ...catalogFactories } = catalog;

/**
 * The modules the proxy's own errors come from, by path under src/. Each is taken whole, so a
 * factory added to one is catalogued without an edit here.
 */
export const PROXY_ERROR_MODULES = {
  "errors/catalog.ts": catalogFactories,
  "auth/auth-errors.ts": authErrors,
  "console/console-errors.ts": consoleErrors,
  "console/relocate.ts": { moveNeedsSimpleQuery },
  "console/show-peers.ts": { notShared },
  "copy/copy-errors.ts": copyInErrors,
  "directory/shared-errors.ts": sharedErrors,
  "distributed/copy-errors.ts": copyErrors,
  "distributed/txn-errors.ts": txnErrors,
  "ids/restripe-errors.ts": restripeErrors,
  "maintenance/maintenance-errors.ts": maintenanceErrors,
  "moves/move-errors.ts": moveErrors,
  "replicas/replica-errors.ts": replicaErrors,
  "scatter/errors.ts": scatterErrors,
  "scatter/value-errors.ts": valueErrors,
} as const;

/**
 * Every error factory of the proxy itself, by name (the packages' own are `POOL_ERRORS`,
 * `TXN_ERRORS`, `REFUSALS` and `PROTO_ERRORS`). docs/errors.md is checked against this list, so an
 * error added here without a row there fails the tests.
 *
 * @example
 * PROXY_ERRORS.passwordFailed("alice").code; // "28P01"
 */
export const PROXY_ERRORS = {
  ...catalogFactories,
  ...authErrors,
  ...consoleErrors,
  moveNeedsSimpleQuery,
  notShared,
  ...copyInErrors,
  ...sharedErrors,
  ...copyErrors,
  ...txnErrors,
  ...restripeErrors,
  ...maintenanceErrors,
  ...moveErrors,
  ...replicaErrors,
  ...scatterErrors,
  ...valueErrors,
} as const;
