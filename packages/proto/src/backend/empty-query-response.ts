import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Sent instead of CommandComplete for an empty query string. */
export interface EmptyQueryResponse {
  readonly type: "EmptyQueryResponse";
}

export function decodeEmptyQueryResponse(payload: Buffer): EmptyQueryResponse | ProtocolFault {
  return decodeEmpty(payload, "EmptyQueryResponse");
}

export function writeEmptyQueryResponse(w: Writer): Writer {
  return writeEmpty(w, BackendCode.EmptyQueryResponse);
}

export function encodeEmptyQueryResponse(): Buffer {
  return emptyMessage(BackendCode.EmptyQueryResponse);
}
