import type { SessionPort } from "../engine/session-port.js";

/**
 * The region where the session's own state lives, so where a statement that is about the session
 * (SET, PREPARE, a function call) runs: its open block's first region, else the region of the
 * connection it is pinned to, else home.
 */
export function stateRegion(session: SessionPort): string {
  return (
    session.txn?.primaryLeg()?.region ?? session.pinnedLeg?.region ?? session.runtime.router.topology.home.id
  );
}
