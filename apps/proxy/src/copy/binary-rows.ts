import {
  type KeyField,
  missingKey,
  type RowFault,
  type RowHandler,
  type RowReader,
  rowTooLong,
} from "./row-reader.js";

/** `PGCOPY\n\377\r\n\0`: the binary format's signature. */
const SIGNATURE = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]);
/** Signature, flags (int32) and header extension length (int32). */
const FIXED_HEADER = SIGNATURE.length + 8;

/** Turns a key field's bytes into the key's text; null when the type cannot be read. */
export type BinaryKeyDecoder = (bytes: Buffer, start: number, end: number) => string | null;

/**
 * PostgreSQL's binary COPY format: a header (signature, flags, extension), then tuples of an
 * int16 field count and, per field, an int32 length (-1 for NULL) and the bytes, then the int16
 * -1 trailer. Tuples are cut whatever the CopyData messages' boundaries; the header goes to
 * every region, the trailer is not passed on (each region's stream gets its own).
 */
export class BinaryRows implements RowReader {
  finished = false;
  rows = 0;
  private buffered: Buffer = Buffer.alloc(0);
  private headerRead = false;

  constructor(
    private readonly handler: RowHandler,
    private readonly keyField: KeyField | null,
    private readonly decodeKey: BinaryKeyDecoder,
    private readonly maxRowBytes: number,
  ) {}

  push(chunk: Buffer): RowFault | null {
    if (this.finished) return null;
    let bytes: Buffer;
    let copied = false;
    if (this.buffered.length === 0) bytes = chunk;
    else {
      bytes = Buffer.concat([this.buffered, chunk]);
      copied = true;
    }
    let at = 0;
    if (!this.headerRead) {
      if (bytes.length < FIXED_HEADER) return this.keep(bytes, 0, copied);
      if (bytes.compare(SIGNATURE, 0, SIGNATURE.length, 0, SIGNATURE.length) !== 0) {
        return { line: 1, reason: "format", message: "COPY file signature not recognized" };
      }
      const extension = bytes.readInt32BE(SIGNATURE.length + 4);
      if (extension < 0)
        return { line: 1, reason: "format", message: "invalid COPY file header (missing length)" };
      if (bytes.length < FIXED_HEADER + extension) return this.keep(bytes, 0, copied);
      this.handler.prefix(bytes.subarray(0, FIXED_HEADER + extension));
      at = FIXED_HEADER + extension;
      this.headerRead = true;
    }
    while (at + 2 <= bytes.length) {
      const count = bytes.readInt16BE(at);
      if (count === -1) {
        this.finished = true;
        return null;
      }
      const line = this.rows + 1;
      if (count < 0) return { line, reason: "format", message: "row field count is negative" };
      let end = at + 2;
      let keyStart = -1;
      let keyEnd = -1;
      let complete = true;
      for (let field = 0; field < count; field++) {
        if (end + 4 > bytes.length) {
          complete = false;
          break;
        }
        const length = bytes.readInt32BE(end);
        end += 4;
        if (length < -1) return { line, reason: "format", message: "invalid field size" };
        if (field === this.keyField?.index) {
          keyStart = length === -1 ? -2 : end;
          keyEnd = end + Math.max(length, 0);
        }
        if (length > 0) end += length;
        if (end > bytes.length) {
          complete = false;
          break;
        }
      }
      if (!complete) {
        if (bytes.length - at > this.maxRowBytes) return rowTooLong(line, this.maxRowBytes);
        break;
      }
      this.rows++;
      const row = bytes.subarray(at, end);
      const keyField = this.keyField;
      if (keyField === null) this.handler.row(row, undefined, line);
      else if (keyStart === -1) return missingKey(line, keyField);
      else if (keyStart === -2) this.handler.row(row, null, line);
      else {
        const key = this.decodeKey(bytes, keyStart, keyEnd);
        if (key === null) {
          return {
            line,
            reason: "format",
            message: `incorrect binary data format in column "${keyField.name}"`,
          };
        }
        this.handler.row(row, key, line);
      }
      at = end;
    }
    return this.keep(bytes, at, copied);
  }

  end(): RowFault | null {
    if (this.finished || (this.headerRead && this.buffered.length === 0)) return null;
    if (!this.headerRead && this.buffered.length === 0 && this.rows === 0) return null;
    return { line: this.rows + 1, reason: "format", message: "unexpected EOF in COPY data" };
  }

  private keep(bytes: Buffer, from: number, copied: boolean): null {
    const rest = bytes.subarray(from);
    // The message is a view into the framer's buffer: what is kept must be copied.
    this.buffered = copied ? rest : Buffer.from(rest);
    return null;
  }
}
