import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** Simple query: one string that may hold several statements. */
export interface Query {
  readonly type: "Query";
  readonly sql: string;
}

export function decodeQuery(payload: Buffer): Query | ProtocolFault {
  const r = new Reader(payload, "Query");
  const sql = r.cstring("query text");
  return r.result({ type: "Query", sql });
}

export function writeQuery(w: Writer, msg: Fields<Query>): Writer {
  return w.begin(FrontendCode.Query).cstring(msg.sql).end();
}

export function encodeQuery(msg: Fields<Query>): Buffer {
  return encodeOne((w) => writeQuery(w, msg));
}
