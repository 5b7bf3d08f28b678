import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A GSSAPI or SSPI token; `data` is a view. */
export interface GSSResponse {
  readonly type: "GSSResponse";
  readonly data: Buffer;
}

export function decodeGSSResponse(payload: Buffer): GSSResponse | ProtocolFault {
  const r = new Reader(payload, "GSSResponse");
  return r.result({ type: "GSSResponse", data: r.rest() });
}

export function writeGSSResponse(w: Writer, msg: Fields<GSSResponse>): Writer {
  return w.begin(FrontendCode.AuthenticationResponse).bytes(msg.data).end();
}

export function encodeGSSResponse(msg: Fields<GSSResponse>): Buffer {
  return encodeOne((w) => writeGSSResponse(w, msg));
}
