import type { Frame } from "@geo/proto";
import type { SessionPort } from "../../engine/session-port.js";
import { unknownPortal } from "../../errors/catalog.js";
import type { Leg } from "../../executor/leg.js";
import { EXTENDED } from "./extended-state.js";

/**
 * The connection where a cursor the client declared in SQL (DECLARE) lives: a portal of the
 * same namespace as the protocol's. Only while the session holds one connection a cursor can
 * be on: its transaction's only leg, or the connection it is pinned to (WITH HOLD).
 */
export function cursorLeg(session: SessionPort): Leg | null {
  const txn = session.txn;
  if (txn !== null) return txn.legs.size === 1 ? txn.legs.values()[0]! : null;
  return session.pinnedLeg;
}

/** Describe, Execute or Close of a portal the proxy did not bind: a SQL cursor, or 34000. */
export async function toCursor(
  session: SessionPort,
  name: string,
  frame: Frame,
  kind: "describe-portal" | "execute" | "close",
): Promise<void> {
  const held = cursorLeg(session);
  if (held === null || held.broken !== null) {
    session.fail(unknownPortal(name), EXTENDED);
    return;
  }
  const leg = await session.activate(held);
  session.relay.expect({ leg, kind, mode: "relay" });
  leg.write(frame.bytes);
}
