import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Close succeeded. */
export interface CloseComplete {
  readonly type: "CloseComplete";
}

export function decodeCloseComplete(payload: Buffer): CloseComplete | ProtocolFault {
  return decodeEmpty(payload, "CloseComplete");
}

export function writeCloseComplete(w: Writer): Writer {
  return writeEmpty(w, BackendCode.CloseComplete);
}

export function encodeCloseComplete(): Buffer {
  return emptyMessage(BackendCode.CloseComplete);
}
