import { FrontendCode } from "../codes.js";
import { FaultReason, type ProtocolFault, protocolFault } from "../fault.js";
import { encodeOne, type Fields, type FormatCode, isFormatCode } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/**
 * Extended protocol: bind parameter values to a prepared statement, making a portal.
 * Parameter format codes may be empty (all text), one code (applies to all), or one per parameter;
 * result format codes follow the same rule for the columns.
 */
export interface Bind {
  readonly type: "Bind";
  readonly portal: string;
  readonly statement: string;
  readonly paramFormats: readonly FormatCode[];
  /** Values as views into the message; null is SQL NULL. */
  readonly params: readonly (Buffer | null)[];
  readonly resultFormats: readonly FormatCode[];
}

function readFormats(r: Reader, what: string): FormatCode[] {
  const count = r.u16(`${what} count`);
  const formats: FormatCode[] = [];
  for (let i = 0; i < count && r.fault === null; i++) {
    const code = r.i16(what);
    if (!isFormatCode(code)) r.invalid(`${what} ${code} is neither 0 (text) nor 1 (binary)`);
    formats.push(code as FormatCode);
  }
  return formats;
}

export function decodeBind(payload: Buffer): Bind | ProtocolFault {
  const r = new Reader(payload, "Bind");
  const portal = r.cstring("portal name");
  const statement = r.cstring("statement name");
  const paramFormats = readFormats(r, "parameter format code");
  const count = r.u16("parameter count");
  const params: (Buffer | null)[] = [];
  for (let i = 0; i < count && r.fault === null; i++) params.push(r.nullableBytes("parameter"));
  const resultFormats = readFormats(r, "result format code");
  if (paramFormats.length > 1 && paramFormats.length !== count) {
    r.invalid(`${paramFormats.length} parameter format codes for ${count} parameters`);
  }
  return r.result({ type: "Bind", portal, statement, paramFormats, params, resultFormats });
}

export function writeBind(w: Writer, msg: Fields<Bind>): Writer {
  w.begin(FrontendCode.Bind).cstring(msg.portal).cstring(msg.statement).u16(msg.paramFormats.length);
  for (const f of msg.paramFormats) w.i16(f);
  w.u16(msg.params.length);
  for (const p of msg.params) w.nullableBytes(p);
  w.u16(msg.resultFormats.length);
  for (const f of msg.resultFormats) w.i16(f);
  return w.end();
}

export function encodeBind(msg: Fields<Bind>): Buffer {
  return encodeOne((w) => writeBind(w, msg));
}

/**
 * A one-pass index over a Bind body for routing: names, formats and parameter values are read on
 * demand from offsets, without copying values or building arrays of buffers.
 *
 * @example
 * ```ts
 * const view = BindView.from(frame.payload);
 * if (!isProtocolFault(view) && !view.isNull(0)) route(view.text(0));
 * ```
 */
export class BindView {
  private constructor(
    private readonly payload: Buffer,
    private readonly statementAt: number,
    private readonly formatsAt: number,
    private readonly formatCount: number,
    /** Pairs (start, length) per parameter; start -1 is NULL. Plain numbers: cheaper than typed arrays here. */
    private readonly spans: number[],
    private readonly resultsAt: number,
    readonly resultFormatCount: number,
  ) {}

  /** Indexes a Bind payload, or returns the fault that makes it unreadable. */
  static from(payload: Buffer): BindView | ProtocolFault {
    const r = new Reader(payload, "Bind");
    r.skipCString("portal name");
    const statementAt = r.skipCString("statement name");
    const formatCount = r.u16("parameter format count");
    const formatsAt = r.offset;
    r.skip(formatCount * 2, "parameter format codes");
    const count = r.u16("parameter count");
    const spans: number[] = [];
    for (let i = 0; i < count && r.fault === null; i++) {
      const length = r.i32("parameter length");
      if (length === -1) {
        spans.push(-1, -1);
        continue;
      }
      spans.push(r.offset, length);
      r.skip(length, "parameter");
    }
    const resultFormatCount = r.u16("result format count");
    const resultsAt = r.offset;
    r.skip(resultFormatCount * 2, "result format codes");
    r.end();
    if (r.fault !== null) return r.fault;
    if (formatCount > 1 && formatCount !== count) {
      return protocolFault(
        FaultReason.invalidValue,
        `Bind: ${formatCount} parameter format codes for ${count} parameters`,
      );
    }
    for (let i = 0; i < formatCount; i++) {
      const code = payload.readInt16BE(formatsAt + 2 * i);
      if (!isFormatCode(code))
        return protocolFault(FaultReason.invalidValue, `Bind: parameter format code ${code}`);
    }
    for (let i = 0; i < resultFormatCount; i++) {
      const code = payload.readInt16BE(resultsAt + 2 * i);
      if (!isFormatCode(code))
        return protocolFault(FaultReason.invalidValue, `Bind: result format code ${code}`);
    }
    return new BindView(payload, statementAt, formatsAt, formatCount, spans, resultsAt, resultFormatCount);
  }

  /** The portal name ("" is the unnamed portal), decoded on access. */
  get portal(): string {
    return this.statementAt === 1 ? "" : this.payload.toString("utf8", 0, this.statementAt - 1);
  }

  /** The prepared statement's name ("" is the unnamed statement), decoded on access. */
  get statement(): string {
    const end = this.formatsAt - 3;
    return end === this.statementAt ? "" : this.payload.toString("utf8", this.statementAt, end);
  }

  get paramCount(): number {
    return this.spans.length >> 1;
  }

  /** The format of parameter i, applying the "none / one for all / one each" rule. */
  format(i: number): FormatCode {
    if (this.formatCount === 0) return 0;
    const at = this.formatsAt + 2 * (this.formatCount === 1 ? 0 : i);
    return this.payload.readInt16BE(at) as FormatCode;
  }

  isNull(i: number): boolean {
    return this.spans[2 * i] === -1;
  }

  /** Byte length of parameter i, -1 for NULL. */
  length(i: number): number {
    return this.spans[2 * i + 1] ?? -1;
  }

  /** A view of parameter i's bytes, null for SQL NULL (or an index out of range). */
  value(i: number): Buffer | null {
    const start = this.spans[2 * i];
    if (start === undefined || start === -1) return null;
    return this.payload.subarray(start, start + this.spans[2 * i + 1]!);
  }

  /** Parameter i decoded as UTF-8 text, null for SQL NULL. */
  text(i: number): string | null {
    const start = this.spans[2 * i];
    if (start === undefined || start === -1) return null;
    return this.payload.toString("utf8", start, start + this.spans[2 * i + 1]!);
  }

  /** The result format requested for column i (same rule as parameters). */
  resultFormat(i: number): FormatCode {
    if (this.resultFormatCount === 0) return 0;
    const at = this.resultsAt + 2 * (this.resultFormatCount === 1 ? 0 : i);
    return this.payload.readInt16BE(at) as FormatCode;
  }
}
