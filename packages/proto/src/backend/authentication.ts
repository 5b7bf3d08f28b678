import { assertNever } from "../assert-never.js";
import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The int32 after 'R' that says which authentication request this is. */
export const AuthenticationKind = {
  Ok: 0,
  KerberosV5: 2,
  CleartextPassword: 3,
  MD5Password: 5,
  GSS: 7,
  GSSContinue: 8,
  SSPI: 9,
  SASL: 10,
  SASLContinue: 11,
  SASLFinal: 12,
} as const;
export type AuthenticationKind = (typeof AuthenticationKind)[keyof typeof AuthenticationKind];

/** Every 'R' message: a request for credentials, a SASL step, or Ok. Byte payloads are views. */
export type Authentication =
  | { readonly type: "AuthenticationOk" }
  | { readonly type: "AuthenticationKerberosV5" }
  | { readonly type: "AuthenticationCleartextPassword" }
  | { readonly type: "AuthenticationMD5Password"; readonly salt: Buffer }
  | { readonly type: "AuthenticationGSS" }
  | { readonly type: "AuthenticationGSSContinue"; readonly data: Buffer }
  | { readonly type: "AuthenticationSSPI" }
  | { readonly type: "AuthenticationSASL"; readonly mechanisms: readonly string[] }
  | { readonly type: "AuthenticationSASLContinue"; readonly data: Buffer }
  | { readonly type: "AuthenticationSASLFinal"; readonly data: Buffer };

export function decodeAuthentication(payload: Buffer): Authentication | ProtocolFault {
  const r = new Reader(payload, "Authentication");
  const kind = r.i32("authentication kind");
  switch (kind) {
    case AuthenticationKind.Ok:
      return r.result({ type: "AuthenticationOk" });
    case AuthenticationKind.KerberosV5:
      return r.result({ type: "AuthenticationKerberosV5" });
    case AuthenticationKind.CleartextPassword:
      return r.result({ type: "AuthenticationCleartextPassword" });
    case AuthenticationKind.MD5Password:
      return r.result({ type: "AuthenticationMD5Password", salt: r.bytes(4, "salt") });
    case AuthenticationKind.GSS:
      return r.result({ type: "AuthenticationGSS" });
    case AuthenticationKind.GSSContinue:
      return r.result({ type: "AuthenticationGSSContinue", data: r.rest() });
    case AuthenticationKind.SSPI:
      return r.result({ type: "AuthenticationSSPI" });
    case AuthenticationKind.SASL: {
      const mechanisms: string[] = [];
      for (;;) {
        const name = r.cstring("mechanism");
        if (r.fault !== null || name === "") break;
        mechanisms.push(name);
      }
      return r.result({ type: "AuthenticationSASL", mechanisms });
    }
    case AuthenticationKind.SASLContinue:
      return r.result({ type: "AuthenticationSASLContinue", data: r.rest() });
    case AuthenticationKind.SASLFinal:
      return r.result({ type: "AuthenticationSASLFinal", data: r.rest() });
    default:
      r.invalid(`unknown authentication kind ${kind}`);
      return r.fault!;
  }
}

export function writeAuthentication(w: Writer, msg: Authentication): Writer {
  w.begin(BackendCode.Authentication);
  switch (msg.type) {
    case "AuthenticationOk":
      return w.i32(AuthenticationKind.Ok).end();
    case "AuthenticationKerberosV5":
      return w.i32(AuthenticationKind.KerberosV5).end();
    case "AuthenticationCleartextPassword":
      return w.i32(AuthenticationKind.CleartextPassword).end();
    case "AuthenticationMD5Password":
      return w.i32(AuthenticationKind.MD5Password).bytes(msg.salt).end();
    case "AuthenticationGSS":
      return w.i32(AuthenticationKind.GSS).end();
    case "AuthenticationGSSContinue":
      return w.i32(AuthenticationKind.GSSContinue).bytes(msg.data).end();
    case "AuthenticationSSPI":
      return w.i32(AuthenticationKind.SSPI).end();
    case "AuthenticationSASL":
      w.i32(AuthenticationKind.SASL);
      for (const m of msg.mechanisms) w.cstring(m);
      return w.u8(0).end();
    case "AuthenticationSASLContinue":
      return w.i32(AuthenticationKind.SASLContinue).bytes(msg.data).end();
    case "AuthenticationSASLFinal":
      return w.i32(AuthenticationKind.SASLFinal).bytes(msg.data).end();
    default:
      return assertNever(msg);
  }
}

export function encodeAuthentication(msg: Authentication): Buffer {
  return encodeOne((w) => writeAuthentication(w, msg));
}
