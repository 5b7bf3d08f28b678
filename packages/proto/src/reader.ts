import { FaultReason, type ProtocolFault, protocolFault } from "./fault.js";

/**
 * A bounds-checked cursor over one message body. Reads never throw: a read past the end returns a
 * neutral value (0, "", an empty view) and records the first fault, which the decoder returns once
 * it has read every field. Checking once at the end keeps decoders straight-line and cheap.
 */
export class Reader {
  private pos = 0;
  private failure: ProtocolFault | null = null;

  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  /** The first fault met, or null while every read stayed inside the body. */
  get fault(): ProtocolFault | null {
    return this.failure;
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  private fail(reason: FaultReason, detail: string): void {
    if (this.failure === null) this.failure = protocolFault(reason, `${this.what}: ${detail}`);
    this.pos = this.buf.length;
  }

  private has(n: number, field: string): boolean {
    if (this.failure !== null) return false;
    if (this.buf.length - this.pos >= n) return true;
    this.fail(FaultReason.truncated, `body ends before ${field} at offset ${this.pos}`);
    return false;
  }

  u8(field = "byte"): number {
    if (!this.has(1, field)) return 0;
    return this.buf[this.pos++]!;
  }

  i16(field = "int16"): number {
    if (!this.has(2, field)) return 0;
    const value = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return value;
  }

  /** Counts on the wire are 16-bit and read unsigned, as the server does. */
  u16(field = "count"): number {
    if (!this.has(2, field)) return 0;
    const value = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return value;
  }

  i32(field = "int32"): number {
    if (!this.has(4, field)) return 0;
    const value = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  /** Object ids are unsigned 32-bit. */
  u32(field = "oid"): number {
    if (!this.has(4, field)) return 0;
    const value = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  /** A NUL-terminated UTF-8 string. */
  cstring(field = "string"): string {
    if (this.failure !== null) return "";
    const nul = this.buf.indexOf(0, this.pos);
    if (nul === -1) {
      this.fail(FaultReason.unterminatedString, `${field} at offset ${this.pos} has no terminator`);
      return "";
    }
    const text = nul === this.pos ? "" : this.buf.toString("utf8", this.pos, nul);
    this.pos = nul + 1;
    return text;
  }

  /** Steps over a NUL-terminated string without decoding it; returns where it starts. */
  skipCString(field = "string"): number {
    const start = this.pos;
    if (this.failure !== null) return start;
    const nul = this.buf.indexOf(0, this.pos);
    if (nul === -1) {
      this.fail(FaultReason.unterminatedString, `${field} at offset ${this.pos} has no terminator`);
      return start;
    }
    this.pos = nul + 1;
    return start;
  }

  /** A view of the next n bytes (not a copy). */
  bytes(n: number, field = "bytes"): Buffer {
    if (n < 0) {
      this.fail(FaultReason.invalidValue, `${field} has negative length ${n}`);
      return EMPTY;
    }
    if (!this.has(n, field)) return EMPTY;
    const view = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return view;
  }

  /** Steps over n bytes without making a view. */
  skip(n: number, field = "bytes"): void {
    if (n < 0) {
      this.fail(FaultReason.invalidValue, `${field} has negative length ${n}`);
      return;
    }
    if (this.has(n, field)) this.pos += n;
  }

  /** Int32 length then that many bytes; length -1 means SQL NULL. */
  nullableBytes(field = "value"): Buffer | null {
    const length = this.i32(`${field} length`);
    if (length === -1) return null;
    return this.bytes(length, field);
  }

  /** A view of everything left. */
  rest(): Buffer {
    const view = this.buf.subarray(this.pos);
    this.pos = this.buf.length;
    return view;
  }

  /** Records a fault if bytes are left after the last field. */
  end(): void {
    if (this.failure === null && this.pos !== this.buf.length) {
      this.fail(FaultReason.trailingBytes, `${this.buf.length - this.pos} unexpected trailing bytes`);
    }
  }

  /** Records a value-level fault found by the decoder itself. */
  invalid(detail: string): void {
    this.fail(FaultReason.invalidValue, detail);
  }

  /** Returns the fault if any, else the value: the last line of every decoder. */
  result<T>(value: T): T | ProtocolFault {
    this.end();
    return this.failure ?? value;
  }
}

const EMPTY = Buffer.alloc(0);
