import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** Extended protocol: prepare `sql` as statement `name` ("" is the unnamed statement). */
export interface Parse {
  readonly type: "Parse";
  readonly name: string;
  readonly sql: string;
  /** Parameter type OIDs the client fixes; 0 leaves a parameter's type to the server. */
  readonly paramTypes: readonly number[];
}

export function decodeParse(payload: Buffer): Parse | ProtocolFault {
  const r = new Reader(payload, "Parse");
  const name = r.cstring("statement name");
  const sql = r.cstring("query text");
  const count = r.u16("parameter type count");
  const paramTypes: number[] = [];
  for (let i = 0; i < count && r.fault === null; i++) paramTypes.push(r.u32("parameter type"));
  return r.result({ type: "Parse", name, sql, paramTypes });
}

export function writeParse(w: Writer, msg: Fields<Parse>): Writer {
  w.begin(FrontendCode.Parse).cstring(msg.name).cstring(msg.sql).u16(msg.paramTypes.length);
  for (const oid of msg.paramTypes) w.u32(oid);
  return w.end();
}

export function encodeParse(msg: Fields<Parse>): Buffer {
  return encodeOne((w) => writeParse(w, msg));
}
