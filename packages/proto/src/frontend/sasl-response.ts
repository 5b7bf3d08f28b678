import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A later SASL message (for SCRAM, client-final); `data` is a view. */
export interface SASLResponse {
  readonly type: "SASLResponse";
  readonly data: Buffer;
}

export function decodeSASLResponse(payload: Buffer): SASLResponse | ProtocolFault {
  const r = new Reader(payload, "SASLResponse");
  return r.result({ type: "SASLResponse", data: r.rest() });
}

export function writeSASLResponse(w: Writer, msg: Fields<SASLResponse>): Writer {
  return w.begin(FrontendCode.AuthenticationResponse).bytes(msg.data).end();
}

export function encodeSASLResponse(msg: Fields<SASLResponse>): Buffer {
  return encodeOne((w) => writeSASLResponse(w, msg));
}
