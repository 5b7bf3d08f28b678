/**
 * A growable message writer meant to be reused for a whole connection: begin a message, append
 * fields, end it (the length word is patched then), repeat, and flush the batch as one buffer.
 */
export class Writer {
  private buf: Buffer;
  private pos = 0;
  private start = -1;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Bytes written so far (all messages since the last flush). */
  get length(): number {
    return this.pos;
  }

  private ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const bigger = Buffer.allocUnsafe(size);
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** Starts a typed message: code byte, then a length word patched by `end()`. */
  begin(code: number): this {
    this.ensure(5);
    this.buf[this.pos++] = code;
    this.start = this.pos;
    this.pos += 4;
    return this;
  }

  /** Starts a startup-phase packet, which has a length word but no code byte. */
  beginUntyped(): this {
    this.ensure(4);
    this.start = this.pos;
    this.pos += 4;
    return this;
  }

  /** Patches the length word of the message begun last. */
  end(): this {
    this.buf.writeInt32BE(this.pos - this.start, this.start);
    this.start = -1;
    return this;
  }

  u8(value: number): this {
    this.ensure(1);
    this.buf[this.pos++] = value & 0xff;
    return this;
  }

  i16(value: number): this {
    this.ensure(2);
    this.buf.writeInt16BE(value, this.pos);
    this.pos += 2;
    return this;
  }

  u16(value: number): this {
    this.ensure(2);
    this.buf.writeUInt16BE(value, this.pos);
    this.pos += 2;
    return this;
  }

  i32(value: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(value, this.pos);
    this.pos += 4;
    return this;
  }

  u32(value: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(value >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  /** A UTF-8 string and its NUL terminator. */
  cstring(value: string): this {
    const size = Buffer.byteLength(value, "utf8");
    this.ensure(size + 1);
    this.pos += this.buf.write(value, this.pos, size, "utf8");
    this.buf[this.pos++] = 0;
    return this;
  }

  bytes(value: Uint8Array): this {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
    return this;
  }

  /** Int32 length then the bytes; null is written as length -1. */
  nullableBytes(value: Uint8Array | null): this {
    if (value === null) return this.i32(-1);
    this.i32(value.length);
    return this.bytes(value);
  }

  /** Returns a copy of everything written and resets the writer for reuse. */
  flush(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return out;
  }

  /**
   * Returns a view of everything written and resets the writer. The view is only valid until the
   * next write: use it to hand bytes straight to a socket write that copies, or copy it yourself.
   */
  flushView(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    this.pos = 0;
    return out;
  }

  /** Drops everything written since the last flush. */
  reset(): void {
    this.pos = 0;
    this.start = -1;
  }
}
