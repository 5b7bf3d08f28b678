import { decodeClose, type Frame, isProtocolFault, Messages, protocolViolation } from "@geo/proto";
import type { SessionPort } from "../../engine/session-port.js";
import type { ExtendedState } from "./extended-state.js";
import { cursorLeg, toCursor } from "./sql-cursor.js";

export async function closeMessage(session: SessionPort, state: ExtendedState, frame: Frame): Promise<void> {
  const message = decodeClose(frame.payload);
  if (isProtocolFault(message)) {
    session.fatal(protocolViolation(message));
    return;
  }
  if (message.target === "S") {
    // Backend copies stay: they are shared by name and never used for a newer Parse.
    state.statements.delete(message.name);
    session.relay.local({ bytes: Messages.closeComplete });
    return;
  }
  const portal = state.portals.get(message.name);
  state.portals.delete(message.name);
  if (portal === undefined && cursorLeg(session) !== null) {
    await toCursor(session, message.name, frame, "close");
    return;
  }
  if (portal?.leg == null || portal.leg.broken !== null) {
    session.relay.local({ bytes: Messages.closeComplete });
    return;
  }
  const leg = await session.activate(portal.leg);
  session.relay.expect({ leg, kind: "close", mode: "relay" });
  leg.write(frame.bytes);
}
