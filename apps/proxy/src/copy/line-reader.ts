import type { CopyFormatSpec } from "./copy-format.js";
import { type KeyField, type RowFault, type RowHandler, type RowReader, rowTooLong } from "./row-reader.js";

export type { KeyField } from "./row-reader.js";

const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;
const DOT = 0x2e;

/**
 * The rules of one line-oriented format (text or CSV): where a line ends, given what came
 * before it in the line, and how to read a line's key field.
 */
export interface LineFormat {
  /** Starts a new line: forgets the state of the previous one (open quote, pending backslash). */
  reset(): void;
  /** Index just past the first line end in `bytes[from..]` (LF outside quotes and escapes), or -1. */
  scan(bytes: Buffer, from: number): number;
  /** The key of the line `bytes[start..end)` (line end excluded), or a fault's message. */
  key(bytes: Buffer, start: number, end: number, key: KeyField): string | null | { readonly fault: string };
}

/**
 * A RowReader for the text and CSV formats: lines are cut where the format says, wherever the
 * CopyData messages split them. A line spread over several messages is joined once it is
 * complete (its pieces are copied: the messages are views into the framer's buffer).
 */
export class LineReader implements RowReader {
  finished = false;
  rows = 0;
  private line = 0;
  /** Pieces of the line in progress, from earlier messages (copied). */
  private pieces: Buffer[] = [];
  private pending = 0;

  constructor(
    private readonly spec: CopyFormatSpec,
    private readonly format: LineFormat,
    private readonly handler: RowHandler,
    private readonly keyField: KeyField | null,
    private readonly maxRowBytes: number,
  ) {}

  push(chunk: Buffer): RowFault | null {
    if (this.finished) return null;
    let start = 0;
    while (start < chunk.length) {
      const end = this.format.scan(chunk, start);
      if (end === -1) break;
      let line: Buffer;
      if (this.pieces.length === 0) line = chunk.subarray(start, end);
      else {
        this.pieces.push(chunk.subarray(start, end));
        line = Buffer.concat(this.pieces);
        this.pieces = [];
        this.pending = 0;
      }
      this.format.reset();
      const fault = this.onLine(line, true);
      if (fault !== null || this.finished) return fault;
      start = end;
    }
    if (start < chunk.length) {
      this.pending += chunk.length - start;
      if (this.pending > this.maxRowBytes) return rowTooLong(this.line + 1, this.maxRowBytes);
      this.pieces.push(Buffer.from(chunk.subarray(start)));
    }
    return null;
  }

  end(): RowFault | null {
    if (this.finished || this.pieces.length === 0) return null;
    const line = Buffer.concat(this.pieces);
    this.pieces = [];
    return this.onLine(line, false);
  }

  private onLine(line: Buffer, terminated: boolean): RowFault | null {
    let end = line.length;
    if (terminated) {
      end--;
      if (end > 0 && line[end - 1] === CR) end--;
    }
    if (end === 2 && line[0] === BACKSLASH && line[1] === DOT) {
      // The end-of-data marker: PostgreSQL ignores whatever follows it.
      this.finished = true;
      return null;
    }
    this.line++;
    if (this.line === 1 && this.spec.header) {
      this.handler.prefix(line);
      return null;
    }
    this.rows++;
    const field = this.keyField;
    if (field === null) {
      this.handler.row(line, undefined, this.line);
      return null;
    }
    const key = this.format.key(line, 0, end, field);
    if (key !== null && typeof key === "object")
      return { line: this.line, reason: "format", message: key.fault };
    this.handler.row(line, key, this.line);
    return null;
  }
}

/** PostgreSQL's text format: backslash escapes, fields cut at the delimiter. */
export class TextLines implements LineFormat {
  private escaped = false;

  constructor(private readonly spec: CopyFormatSpec) {}

  reset(): void {
    this.escaped = false;
  }

  scan(bytes: Buffer, from: number): number {
    let escaped = this.escaped;
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === LF) {
        this.escaped = false;
        return i + 1;
      }
    }
    this.escaped = escaped;
    return -1;
  }

  key(bytes: Buffer, start: number, end: number, key: KeyField): string | null | { readonly fault: string } {
    const delimiter = this.spec.delimiter;
    let field = 0;
    let fieldStart = start;
    let i = start;
    for (;;) {
      if (i >= end || bytes[i] === delimiter) {
        if (field === key.index) return textValue(bytes, fieldStart, i, this.spec.nullMarker);
        if (i >= end) return { fault: `missing data for column "${key.name}"` };
        field++;
        fieldStart = ++i;
        continue;
      }
      i += bytes[i] === BACKSLASH ? 2 : 1;
    }
  }
}

/** A text-format field's value: NULL when its raw bytes are the NULL marker, else unescaped. */
function textValue(bytes: Buffer, start: number, end: number, nullMarker: Buffer): string | null {
  end = Math.min(end, bytes.length);
  if (
    end - start === nullMarker.length &&
    bytes.compare(nullMarker, 0, nullMarker.length, start, end) === 0
  ) {
    return null;
  }
  const slash = bytes.indexOf(BACKSLASH, start);
  if (slash === -1 || slash >= end) return bytes.toString("utf8", start, end);
  const out = Buffer.allocUnsafe(end - start);
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c !== BACKSLASH || i + 1 >= end) {
      out[n++] = c;
      continue;
    }
    const next = bytes[++i]!;
    switch (next) {
      case 0x62: // \b
        out[n++] = 0x08;
        break;
      case 0x66: // \f
        out[n++] = 0x0c;
        break;
      case 0x6e: // \n
        out[n++] = LF;
        break;
      case 0x72: // \r
        out[n++] = CR;
        break;
      case 0x74: // \t
        out[n++] = 0x09;
        break;
      case 0x76: // \v
        out[n++] = 0x0b;
        break;
      case 0x78: {
        // \x: one or two hex digits
        let value = 0;
        let digits = 0;
        while (digits < 2 && i + 1 < end && hexDigit(bytes[i + 1]!) >= 0) {
          value = value * 16 + hexDigit(bytes[++i]!);
          digits++;
        }
        out[n++] = digits === 0 ? next : value;
        break;
      }
      default:
        if (next >= 0x30 && next <= 0x37) {
          // \ooo: one to three octal digits
          let value = next - 0x30;
          for (let d = 1; d < 3 && i + 1 < end && bytes[i + 1]! >= 0x30 && bytes[i + 1]! <= 0x37; d++) {
            value = value * 8 + (bytes[++i]! - 0x30);
          }
          out[n++] = value & 0xff;
        } else out[n++] = next;
    }
  }
  return out.toString("utf8", 0, n);
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
