import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The result of a FunctionCall: a view of the value, null for SQL NULL. */
export interface FunctionCallResponse {
  readonly type: "FunctionCallResponse";
  readonly result: Buffer | null;
}

export function decodeFunctionCallResponse(payload: Buffer): FunctionCallResponse | ProtocolFault {
  const r = new Reader(payload, "FunctionCallResponse");
  const result = r.nullableBytes("result");
  return r.result({ type: "FunctionCallResponse", result });
}

export function writeFunctionCallResponse(w: Writer, msg: Fields<FunctionCallResponse>): Writer {
  return w.begin(BackendCode.FunctionCallResponse).nullableBytes(msg.result).end();
}

export function encodeFunctionCallResponse(msg: Fields<FunctionCallResponse>): Buffer {
  return encodeOne((w) => writeFunctionCallResponse(w, msg));
}
