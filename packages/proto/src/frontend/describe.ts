import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** 'S' a prepared statement, 'P' a portal: the object Describe and Close act on. */
export type TargetKind = "S" | "P";

export function readTarget(r: Reader): TargetKind {
  const byte = r.u8("target kind");
  if (byte === 0x53) return "S";
  if (byte === 0x50) return "P";
  r.invalid(`target kind 0x${byte.toString(16)} is neither 'S' nor 'P'`);
  return "S";
}

/** Extended protocol: ask for the parameter and row description of a statement or portal. */
export interface Describe {
  readonly type: "Describe";
  readonly target: TargetKind;
  readonly name: string;
}

export function decodeDescribe(payload: Buffer): Describe | ProtocolFault {
  const r = new Reader(payload, "Describe");
  const target = readTarget(r);
  const name = r.cstring("name");
  return r.result({ type: "Describe", target, name });
}

export function writeDescribe(w: Writer, msg: Fields<Describe>): Writer {
  return w.begin(FrontendCode.Describe).u8(msg.target.charCodeAt(0)).cstring(msg.name).end();
}

export function encodeDescribe(msg: Fields<Describe>): Buffer {
  return encodeOne((w) => writeDescribe(w, msg));
}
