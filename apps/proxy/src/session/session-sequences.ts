import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { refuseSessionSequenceValue } from "../errors/catalog.js";

/** Functions that read what nextval() drew earlier in the server session, not the sequence. */
const SESSION_SEQUENCE_READS = ["currval", "lastval"] as const;

/**
 * currval() and lastval() answer from the server session's memory of its own nextval() calls.
 * A client without a server connection of its own (transaction pooling) runs each transaction
 * on whichever pooled connection is free, and pooled connections are not reset between clients:
 * the value would be another client's draw, or an earlier one on another connection. Exact or
 * refuse: they are refused there, before any connection is chosen. With a connection of its own
 * (session pooling) they reach the client's own server session, as on one server.
 */
export function refuseSessionSequences(
  session: SessionPort,
  analyses: readonly Analysis[],
  mode: StatementMode,
): boolean {
  if (session.ownConnection) return false;
  for (const analysis of analyses) {
    const called = analysis.flags.volatileFunctions;
    const read = SESSION_SEQUENCE_READS.find((fn) => called.includes(fn));
    if (read !== undefined) {
      session.fail(refuseSessionSequenceValue(read), mode);
      return true;
    }
  }
  return false;
}
