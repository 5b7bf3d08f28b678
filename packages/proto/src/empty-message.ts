import type { ProtocolFault } from "./fault.js";
import { Reader } from "./reader.js";
import type { Writer } from "./writer.js";

/** Decodes a message whose body must be empty (Sync, Flush, ParseComplete...). */
export function decodeEmpty<T extends string>(
  payload: Buffer,
  type: T,
): { readonly type: T } | ProtocolFault {
  const r = new Reader(payload, type);
  return r.result({ type });
}

export function writeEmpty(w: Writer, code: number): Writer {
  return w.begin(code).end();
}

/** Five bytes: the code then length 4. */
export function emptyMessage(code: number): Buffer {
  const out = Buffer.alloc(5);
  out[0] = code;
  out.writeInt32BE(4, 1);
  return out;
}
