import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The client aborts COPY FROM STDIN, giving a reason the server reports back in its error. */
export interface CopyFail {
  readonly type: "CopyFail";
  readonly message: string;
}

export function decodeCopyFail(payload: Buffer): CopyFail | ProtocolFault {
  const r = new Reader(payload, "CopyFail");
  const message = r.cstring("error message");
  return r.result({ type: "CopyFail", message });
}

export function writeCopyFail(w: Writer, msg: Fields<CopyFail>): Writer {
  return w.begin(FrontendCode.CopyFail).cstring(msg.message).end();
}

export function encodeCopyFail(msg: Fields<CopyFail>): Buffer {
  return encodeOne((w) => writeCopyFail(w, msg));
}
