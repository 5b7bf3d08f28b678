import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The first SASL message: the chosen mechanism and its client-first data (null: none sent). */
export interface SASLInitialResponse {
  readonly type: "SASLInitialResponse";
  readonly mechanism: string;
  readonly data: Buffer | null;
}

export function decodeSASLInitialResponse(payload: Buffer): SASLInitialResponse | ProtocolFault {
  const r = new Reader(payload, "SASLInitialResponse");
  const mechanism = r.cstring("mechanism");
  const data = r.nullableBytes("initial response");
  return r.result({ type: "SASLInitialResponse", mechanism, data });
}

export function writeSASLInitialResponse(w: Writer, msg: Fields<SASLInitialResponse>): Writer {
  return w.begin(FrontendCode.AuthenticationResponse).cstring(msg.mechanism).nullableBytes(msg.data).end();
}

export function encodeSASLInitialResponse(msg: Fields<SASLInitialResponse>): Buffer {
  return encodeOne((w) => writeSASLInitialResponse(w, msg));
}
