import { FaultReason, type ProtocolFault, protocolFault } from "../fault.js";
import { type FormatCode, isFormatCode } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The body shared by CopyInResponse, CopyOutResponse and CopyBothResponse. */
export interface CopyResponseBody {
  /** 0: textual COPY (all columns text); 1: binary COPY. */
  readonly format: FormatCode;
  readonly columnFormats: readonly FormatCode[];
}

export function decodeCopyResponseBody(payload: Buffer, what: string): CopyResponseBody | ProtocolFault {
  const r = new Reader(payload, what);
  const format = r.u8("overall format");
  if (!isFormatCode(format)) r.invalid(`overall format ${format}`);
  const count = r.u16("column count");
  const columnFormats: FormatCode[] = [];
  for (let i = 0; i < count && r.fault === null; i++) {
    const code = r.i16("column format code");
    if (!isFormatCode(code)) r.invalid(`column format code ${code}`);
    columnFormats.push(code as FormatCode);
  }
  if (r.fault === null && format === 0 && columnFormats.some((f) => f !== 0)) {
    return protocolFault(FaultReason.invalidValue, `${what}: textual COPY with a binary column`);
  }
  return r.result({ format: format as FormatCode, columnFormats });
}

export function writeCopyResponseBody(w: Writer, code: number, body: CopyResponseBody): Writer {
  w.begin(code).u8(body.format).u16(body.columnFormats.length);
  for (const f of body.columnFormats) w.i16(f);
  return w.end();
}
