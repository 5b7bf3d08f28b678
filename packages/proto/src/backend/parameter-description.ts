import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The parameter types of a prepared statement, answering Describe('S'). */
export interface ParameterDescription {
  readonly type: "ParameterDescription";
  readonly typeOids: readonly number[];
}

export function decodeParameterDescription(payload: Buffer): ParameterDescription | ProtocolFault {
  const r = new Reader(payload, "ParameterDescription");
  const count = r.u16("parameter count");
  const typeOids: number[] = [];
  for (let i = 0; i < count && r.fault === null; i++) typeOids.push(r.u32("type oid"));
  return r.result({ type: "ParameterDescription", typeOids });
}

export function writeParameterDescription(w: Writer, msg: Fields<ParameterDescription>): Writer {
  w.begin(BackendCode.ParameterDescription).u16(msg.typeOids.length);
  for (const oid of msg.typeOids) w.u32(oid);
  return w.end();
}

export function encodeParameterDescription(msg: Fields<ParameterDescription>): Buffer {
  return encodeOne((w) => writeParameterDescription(w, msg));
}
