import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import type { Writer } from "../writer.js";
import { type CopyResponseBody, decodeCopyResponseBody, writeCopyResponseBody } from "./copy-response.js";

/** COPY TO STDOUT started: CopyData messages follow, then CopyDone. */
export interface CopyOutResponse extends CopyResponseBody {
  readonly type: "CopyOutResponse";
}

export function decodeCopyOutResponse(payload: Buffer): CopyOutResponse | ProtocolFault {
  const body = decodeCopyResponseBody(payload, "CopyOutResponse");
  return "kind" in body ? body : { type: "CopyOutResponse", ...body };
}

export function writeCopyOutResponse(w: Writer, msg: Fields<CopyOutResponse>): Writer {
  return writeCopyResponseBody(w, BackendCode.CopyOutResponse, msg);
}

export function encodeCopyOutResponse(msg: Fields<CopyOutResponse>): Buffer {
  return encodeOne((w) => writeCopyOutResponse(w, msg));
}
