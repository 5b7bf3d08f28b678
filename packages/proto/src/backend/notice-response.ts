import { BackendCode } from "../codes.js";
import type { ErrorFields } from "../errors/error-fields.js";
import { PgError } from "../errors/pg-error.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";
import { readErrorFields, writeErrorFields } from "./error-response.js";

/** A warning or notice; same fields as ErrorResponse, and nothing fails. */
export interface NoticeResponse {
  readonly type: "NoticeResponse";
  readonly fields: ErrorFields;
}

export function decodeNoticeResponse(payload: Buffer): NoticeResponse | ProtocolFault {
  const r = new Reader(payload, "NoticeResponse");
  const fields = readErrorFields(r);
  return r.result({ type: "NoticeResponse", fields });
}

export function writeNoticeResponse(w: Writer, notice: PgError | Fields<NoticeResponse>): Writer {
  const fields = notice instanceof PgError ? notice.toFields() : notice.fields;
  return writeErrorFields(w.begin(BackendCode.NoticeResponse), fields).end();
}

/** Encodes a PgError (severity WARNING, NOTICE...) or raw fields as a NoticeResponse. */
export function encodeNoticeResponse(notice: PgError | Fields<NoticeResponse>): Buffer {
  return encodeOne((w) => writeNoticeResponse(w, notice));
}
