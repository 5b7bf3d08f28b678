import { FrontendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** The client is closing the connection. */
export interface Terminate {
  readonly type: "Terminate";
}

export function decodeTerminate(payload: Buffer): Terminate | ProtocolFault {
  return decodeEmpty(payload, "Terminate");
}

export function writeTerminate(w: Writer): Writer {
  return writeEmpty(w, FrontendCode.Terminate);
}

export function encodeTerminate(): Buffer {
  return emptyMessage(FrontendCode.Terminate);
}
