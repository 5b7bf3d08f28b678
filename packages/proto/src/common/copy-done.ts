import { FrontendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** End of a COPY data stream (same code 'c' in both directions). */
export interface CopyDone {
  readonly type: "CopyDone";
}

export function decodeCopyDone(payload: Buffer): CopyDone | ProtocolFault {
  return decodeEmpty(payload, "CopyDone");
}

export function writeCopyDone(w: Writer): Writer {
  return writeEmpty(w, FrontendCode.CopyDone);
}

export function encodeCopyDone(): Buffer {
  return emptyMessage(FrontendCode.CopyDone);
}
