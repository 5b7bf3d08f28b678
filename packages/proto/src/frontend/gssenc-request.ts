import { StartupRequestCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { Reader } from "../reader.js";

/** Asks to switch to GSSAPI encryption; the server answers with one unframed byte, 'G' or 'N'. */
export interface GSSENCRequest {
  readonly type: "GSSENCRequest";
}

export function decodeGSSENCRequest(payload: Buffer): GSSENCRequest | ProtocolFault {
  const r = new Reader(payload, "GSSENCRequest");
  const code = r.i32("request code");
  if (code !== StartupRequestCode.GSSENCRequest) r.invalid(`request code ${code} is not GSSENCRequest`);
  return r.result({ type: "GSSENCRequest" });
}

export function encodeGSSENCRequest(): Buffer {
  const out = Buffer.alloc(8);
  out.writeInt32BE(8, 0);
  out.writeInt32BE(StartupRequestCode.GSSENCRequest, 4);
  return out;
}
