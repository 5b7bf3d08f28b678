import { StartupRequestCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** Protocol 3.2 allows secret keys of 4 to 256 bytes; 3.0 always uses 4. */
export const MIN_CANCEL_KEY_LENGTH = 4;
export const MAX_CANCEL_KEY_LENGTH = 256;

/**
 * Sent on a new connection to cancel the query running on another one, identified by the
 * process id and secret key from that connection's BackendKeyData. The server never answers.
 */
export interface CancelRequest {
  readonly type: "CancelRequest";
  readonly processId: number;
  /** A view; 4 bytes under protocol 3.0, up to 256 under 3.2. */
  readonly secretKey: Buffer;
}

export function decodeCancelRequest(payload: Buffer): CancelRequest | ProtocolFault {
  const r = new Reader(payload, "CancelRequest");
  const code = r.i32("request code");
  if (code !== StartupRequestCode.CancelRequest) r.invalid(`request code ${code} is not CancelRequest`);
  const processId = r.i32("process id");
  const secretKey = r.rest();
  if (
    r.fault === null &&
    (secretKey.length < MIN_CANCEL_KEY_LENGTH || secretKey.length > MAX_CANCEL_KEY_LENGTH)
  ) {
    r.invalid(`secret key of ${secretKey.length} bytes (allowed: 4 to 256)`);
  }
  return r.result({ type: "CancelRequest", processId, secretKey });
}

export function writeCancelRequest(w: Writer, msg: Fields<CancelRequest>): Writer {
  return w.beginUntyped().i32(StartupRequestCode.CancelRequest).i32(msg.processId).bytes(msg.secretKey).end();
}

export function encodeCancelRequest(msg: Fields<CancelRequest>): Buffer {
  return encodeOne((w) => writeCancelRequest(w, msg));
}
