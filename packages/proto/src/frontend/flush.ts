import { FrontendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Asks the server to send what it has buffered, without ending the batch. */
export interface Flush {
  readonly type: "Flush";
}

export function decodeFlush(payload: Buffer): Flush | ProtocolFault {
  return decodeEmpty(payload, "Flush");
}

export function writeFlush(w: Writer): Writer {
  return writeEmpty(w, FrontendCode.Flush);
}

export function encodeFlush(): Buffer {
  return emptyMessage(FrontendCode.Flush);
}
