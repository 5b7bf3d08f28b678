import { BackendCode } from "../codes.js";
import { ErrorFieldCode, type ErrorFields, errorFieldName, errorFieldNames } from "../errors/error-fields.js";
import { PgError } from "../errors/pg-error.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** An error; the statement (and in extended mode, the rest of the batch until Sync) failed. */
export interface ErrorResponse {
  readonly type: "ErrorResponse";
  readonly fields: ErrorFields;
}

/** Reads code-byte/string pairs until the 0 terminator; unknown codes are skipped, as the docs ask. */
export function readErrorFields(r: Reader): ErrorFields {
  const fields: { -readonly [K in keyof ErrorFields]: ErrorFields[K] } = {};
  for (;;) {
    const code = r.u8("field code");
    if (r.fault !== null || code === 0) break;
    const value = r.cstring("field value");
    const name = errorFieldName(code);
    if (name !== undefined) fields[name] = value;
  }
  return fields;
}

export function writeErrorFields(w: Writer, fields: ErrorFields): Writer {
  for (const name of errorFieldNames) {
    const value = fields[name];
    if (value !== undefined) w.u8(ErrorFieldCode[name]).cstring(value);
  }
  return w.u8(0);
}

export function decodeErrorResponse(payload: Buffer): ErrorResponse | ProtocolFault {
  const r = new Reader(payload, "ErrorResponse");
  const fields = readErrorFields(r);
  return r.result({ type: "ErrorResponse", fields });
}

export function writeErrorResponse(w: Writer, error: PgError | Fields<ErrorResponse>): Writer {
  const fields = error instanceof PgError ? error.toFields() : error.fields;
  return writeErrorFields(w.begin(BackendCode.ErrorResponse), fields).end();
}

/** Encodes a PgError (or raw fields) as an ErrorResponse. */
export function encodeErrorResponse(error: PgError | Fields<ErrorResponse>): Buffer {
  return encodeOne((w) => writeErrorResponse(w, error));
}

/**
 * The value of one field of an ErrorResponse or NoticeResponse payload, found by scanning without
 * decoding the others (e.g. the SQLSTATE for routing, `ErrorFieldCode.code`). Null when absent.
 */
export function errorField(payload: Buffer, fieldCode: number): string | null {
  let pos = 0;
  while (pos < payload.length) {
    const code = payload[pos]!;
    if (code === 0) return null;
    const nul = payload.indexOf(0, pos + 1);
    if (nul === -1) return null;
    if (code === fieldCode) return payload.toString("utf8", pos + 1, nul);
    pos = nul + 1;
  }
  return null;
}
