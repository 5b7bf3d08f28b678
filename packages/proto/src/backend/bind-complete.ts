import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Bind succeeded. */
export interface BindComplete {
  readonly type: "BindComplete";
}

export function decodeBindComplete(payload: Buffer): BindComplete | ProtocolFault {
  return decodeEmpty(payload, "BindComplete");
}

export function writeBindComplete(w: Writer): Writer {
  return writeEmpty(w, BackendCode.BindComplete);
}

export function encodeBindComplete(): Buffer {
  return emptyMessage(BackendCode.BindComplete);
}
