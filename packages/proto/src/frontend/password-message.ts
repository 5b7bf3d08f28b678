import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/**
 * A cleartext or MD5 password ('p'). The code is shared with the SASL and GSS responses: which one
 * a 'p' holds depends on the authentication request the server sent last.
 */
export interface PasswordMessage {
  readonly type: "PasswordMessage";
  readonly password: string;
}

export function decodePasswordMessage(payload: Buffer): PasswordMessage | ProtocolFault {
  const r = new Reader(payload, "PasswordMessage");
  const password = r.cstring("password");
  return r.result({ type: "PasswordMessage", password });
}

export function writePasswordMessage(w: Writer, msg: Fields<PasswordMessage>): Writer {
  return w.begin(FrontendCode.AuthenticationResponse).cstring(msg.password).end();
}

export function encodePasswordMessage(msg: Fields<PasswordMessage>): Buffer {
  return encodeOne((w) => writePasswordMessage(w, msg));
}
