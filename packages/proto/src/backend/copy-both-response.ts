import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import type { Writer } from "../writer.js";
import { type CopyResponseBody, decodeCopyResponseBody, writeCopyResponseBody } from "./copy-response.js";

/** Both directions stream CopyData (streaming replication). */
export interface CopyBothResponse extends CopyResponseBody {
  readonly type: "CopyBothResponse";
}

export function decodeCopyBothResponse(payload: Buffer): CopyBothResponse | ProtocolFault {
  const body = decodeCopyResponseBody(payload, "CopyBothResponse");
  return "kind" in body ? body : { type: "CopyBothResponse", ...body };
}

export function writeCopyBothResponse(w: Writer, msg: Fields<CopyBothResponse>): Writer {
  return writeCopyResponseBody(w, BackendCode.CopyBothResponse, msg);
}

export function encodeCopyBothResponse(msg: Fields<CopyBothResponse>): Buffer {
  return encodeOne((w) => writeCopyBothResponse(w, msg));
}
