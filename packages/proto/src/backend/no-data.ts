import { BackendCode } from "../codes.js";
import { decodeEmpty, emptyMessage, writeEmpty } from "../empty-message.js";
import type { ProtocolFault } from "../fault.js";
import type { Writer } from "../writer.js";

/** Describe of a statement or portal that returns no rows. */
export interface NoData {
  readonly type: "NoData";
}

export function decodeNoData(payload: Buffer): NoData | ProtocolFault {
  return decodeEmpty(payload, "NoData");
}

export function writeNoData(w: Writer): Writer {
  return writeEmpty(w, BackendCode.NoData);
}

export function encodeNoData(): Buffer {
  return emptyMessage(BackendCode.NoData);
}
