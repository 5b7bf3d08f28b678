import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Parse succeeded. */
export interface ParseComplete {
  readonly type: "ParseComplete";
}

export function decodeParseComplete(payload: Buffer): ParseComplete | ProtocolFault {
  return decodeEmpty(payload, "ParseComplete");
}

export function writeParseComplete(w: Writer): Writer {
  return writeEmpty(w, BackendCode.ParseComplete);
}

export function encodeParseComplete(): Buffer {
  return emptyMessage(BackendCode.ParseComplete);
}
