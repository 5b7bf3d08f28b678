import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** Extended protocol: run a portal, returning at most `maxRows` rows (0: no limit). */
export interface Execute {
  readonly type: "Execute";
  readonly portal: string;
  readonly maxRows: number;
}

export function decodeExecute(payload: Buffer): Execute | ProtocolFault {
  const r = new Reader(payload, "Execute");
  const portal = r.cstring("portal name");
  const maxRows = r.i32("row limit");
  return r.result({ type: "Execute", portal, maxRows });
}

export function writeExecute(w: Writer, msg: Fields<Execute>): Writer {
  return w.begin(FrontendCode.Execute).cstring(msg.portal).i32(msg.maxRows).end();
}

export function encodeExecute(msg: Fields<Execute>): Buffer {
  return encodeOne((w) => writeExecute(w, msg));
}
