import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import type { Writer } from "../writer.js";
import { type CopyResponseBody, decodeCopyResponseBody, writeCopyResponseBody } from "./copy-response.js";

/** COPY FROM STDIN started: the client now sends CopyData, then CopyDone or CopyFail. */
export interface CopyInResponse extends CopyResponseBody {
  readonly type: "CopyInResponse";
}

export function decodeCopyInResponse(payload: Buffer): CopyInResponse | ProtocolFault {
  const body = decodeCopyResponseBody(payload, "CopyInResponse");
  return "kind" in body ? body : { type: "CopyInResponse", ...body };
}

export function writeCopyInResponse(w: Writer, msg: Fields<CopyInResponse>): Writer {
  return writeCopyResponseBody(w, BackendCode.CopyInResponse, msg);
}

export function encodeCopyInResponse(msg: Fields<CopyInResponse>): Buffer {
  return encodeOne((w) => writeCopyInResponse(w, msg));
}
