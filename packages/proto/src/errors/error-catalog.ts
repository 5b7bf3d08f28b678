import { protocolViolation } from "./protocol-violation.js";

/**
 * Every error factory @geo/proto has, by name: the one sent to a client whose bytes could not be
 * read. docs/errors.md is checked against this list.
 */
export const PROTO_ERRORS = { protocolViolation } as const;
