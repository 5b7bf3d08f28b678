import type { ProtocolFault } from "../fault.js";
import { PgError } from "./pg-error.js";
import { SqlState } from "./sqlstate.js";

/**
 * The FATAL error sent to a client whose bytes could not be read, just before its connection is
 * closed. Only that connection ends.
 */
export function protocolViolation(fault: ProtocolFault): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    severity: "FATAL",
    message: `invalid message: ${fault.message}`,
    hint: "The client sent bytes that are not a valid PostgreSQL protocol 3 message; check the driver.",
  });
}
