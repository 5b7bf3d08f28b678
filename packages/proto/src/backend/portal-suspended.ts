import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Execute stopped at its row limit; the portal can be executed again. */
export interface PortalSuspended {
  readonly type: "PortalSuspended";
}

export function decodePortalSuspended(payload: Buffer): PortalSuspended | ProtocolFault {
  return decodeEmpty(payload, "PortalSuspended");
}

export function writePortalSuspended(w: Writer): Writer {
  return writeEmpty(w, BackendCode.PortalSuspended);
}

export function encodePortalSuspended(): Buffer {
  return emptyMessage(BackendCode.PortalSuspended);
}
