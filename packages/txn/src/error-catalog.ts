import * as errors from "./errors.js";

// The error class and the readers of a participant's error are not factories.
const {
  TxnError: _class,
  sqlStateOf: _sqlStateOf,
  isConnectionFailure: _isConnectionFailure,
  isStepTimeout: _isStepTimeout,
  ...factories
} = errors;

/**
 * Every error factory @geo/txn has, by name. Taken from the errors module as a whole, so a factory
 * added there is listed here without an edit, and docs/errors.md is checked against this list.
 */
export const TXN_ERRORS = factories;
