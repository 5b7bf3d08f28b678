import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";
import { readTarget, type TargetKind } from "./describe.js";

/** Extended protocol: drop a prepared statement ('S') or a portal ('P'). */
export interface Close {
  readonly type: "Close";
  readonly target: TargetKind;
  readonly name: string;
}

export function decodeClose(payload: Buffer): Close | ProtocolFault {
  const r = new Reader(payload, "Close");
  const target = readTarget(r);
  const name = r.cstring("name");
  return r.result({ type: "Close", target, name });
}

export function writeClose(w: Writer, msg: Fields<Close>): Writer {
  return w.begin(FrontendCode.Close).u8(msg.target.charCodeAt(0)).cstring(msg.name).end();
}

export function encodeClose(msg: Fields<Close>): Buffer {
  return encodeOne((w) => writeClose(w, msg));
}
