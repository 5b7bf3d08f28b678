import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A chunk of COPY data (same code 'd' in both directions); `data` is a view. */
export interface CopyData {
  readonly type: "CopyData";
  readonly data: Buffer;
}

export function decodeCopyData(payload: Buffer): CopyData | ProtocolFault {
  const r = new Reader(payload, "CopyData");
  return r.result({ type: "CopyData", data: r.rest() });
}

export function writeCopyData(w: Writer, msg: Fields<CopyData>): Writer {
  return w.begin(FrontendCode.CopyData).bytes(msg.data).end();
}

export function encodeCopyData(msg: Fields<CopyData>): Buffer {
  return encodeOne((w) => writeCopyData(w, msg));
}
