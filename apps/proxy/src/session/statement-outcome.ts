import type { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { inFailedTransaction } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";

// How a statement ends for the session: its connection kept or given back after ReadyForQuery,
// or a refusal of the proxy's sent in its place.

/**
 * After a statement's ReadyForQuery outside a transaction block: a leg left in a transaction
 * (the statement began one) becomes the session's transaction; an idle one goes back to the pool.
 */
export function afterReady(session: SessionPort, leg: Leg, status: string | null): void {
  if (session.txn === null) {
    if (status === "T" || status === "E") {
      session.block.begin("BEGIN", false, session.settings.snapshot()).legs.add(leg);
      return;
    }
    session.releaseLeg(leg);
    return;
  }
  if (status === "I" && session.txn.legs.size === 1 && session.txn.legs.get(leg.region) === leg) {
    // The transaction ended inside a string sent as one (BEGIN ... COMMIT to one region).
    session.block.end();
    session.releaseLeg(leg);
  }
}

/** Sends a proxy error in its place; inside a transaction block the block fails, as in PostgreSQL. */
export function failStatement(session: SessionPort, error: PgError, mode: StatementMode): void {
  session.block.fail();
  if (mode.extended) {
    session.extended.abortBatch();
    session.relay.error(error, true);
    return;
  }
  session.relay.error(error, false);
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

/** Statements in a failed block, except those that end it, get 25P02. */
export function refuseInFailedBlock(session: SessionPort, analysis: Analysis, mode: StatementMode): boolean {
  // A block whose ROLLBACK (or COMMIT) is already on its way is over on the server.
  // An empty statement is no command: PostgreSQL parses it even in a failed block.
  if (session.status() !== "E" || session.txn?.ending === true || analysis.kind === "empty") return false;
  const action = analysis.transaction?.action;
  if (action === "rollback" || action === "rollback-to" || action === "commit" || action === "prepare") {
    return false;
  }
  session.fail(inFailedTransaction(), mode);
  return true;
}
