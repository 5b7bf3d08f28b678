import { FrontendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Ends an extended-protocol batch: the server answers with ReadyForQuery, after discarding the rest of the batch on error. */
export interface Sync {
  readonly type: "Sync";
}

export function decodeSync(payload: Buffer): Sync | ProtocolFault {
  return decodeEmpty(payload, "Sync");
}

export function writeSync(w: Writer): Writer {
  return writeEmpty(w, FrontendCode.Sync);
}

export function encodeSync(): Buffer {
  return emptyMessage(FrontendCode.Sync);
}
