import * as refusals from "./refusals.js";

// The list of stable codes is not a factory.
const { REFUSAL_CODES: _codes, ...factories } = refusals;

/**
 * Every refusal factory of the planner, by name. Taken from the refusals module as a whole, so a
 * refusal added there is listed here without an edit, and docs/errors.md is checked against this
 * list; each factory's `code` is one of `REFUSAL_CODES`.
 */
export const REFUSALS = factories;
