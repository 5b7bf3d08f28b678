import { StartupRequestCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { Reader } from "../reader.js";

/** Asks to switch to TLS; the server answers with one unframed byte, 'S' or 'N'. */
export interface SSLRequest {
  readonly type: "SSLRequest";
}

export function decodeSSLRequest(payload: Buffer): SSLRequest | ProtocolFault {
  const r = new Reader(payload, "SSLRequest");
  const code = r.i32("request code");
  if (code !== StartupRequestCode.SSLRequest) r.invalid(`request code ${code} is not SSLRequest`);
  return r.result({ type: "SSLRequest" });
}

export function encodeSSLRequest(): Buffer {
  const out = Buffer.alloc(8);
  out.writeInt32BE(8, 0);
  out.writeInt32BE(StartupRequestCode.SSLRequest, 4);
  return out;
}
