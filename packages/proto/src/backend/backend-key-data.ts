import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { MAX_CANCEL_KEY_LENGTH, MIN_CANCEL_KEY_LENGTH } from "../frontend/cancel-request.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The key a client must quote in a CancelRequest for this session. */
export interface BackendKeyData {
  readonly type: "BackendKeyData";
  readonly processId: number;
  /** A view; 4 bytes under protocol 3.0, up to 256 under 3.2. */
  readonly secretKey: Buffer;
}

export function decodeBackendKeyData(payload: Buffer): BackendKeyData | ProtocolFault {
  const r = new Reader(payload, "BackendKeyData");
  const processId = r.i32("process id");
  const secretKey = r.rest();
  if (
    r.fault === null &&
    (secretKey.length < MIN_CANCEL_KEY_LENGTH || secretKey.length > MAX_CANCEL_KEY_LENGTH)
  ) {
    r.invalid(`secret key of ${secretKey.length} bytes (allowed: 4 to 256)`);
  }
  return r.result({ type: "BackendKeyData", processId, secretKey });
}

export function writeBackendKeyData(w: Writer, msg: Fields<BackendKeyData>): Writer {
  return w.begin(BackendCode.BackendKeyData).i32(msg.processId).bytes(msg.secretKey).end();
}

export function encodeBackendKeyData(msg: Fields<BackendKeyData>): Buffer {
  return encodeOne((w) => writeBackendKeyData(w, msg));
}
