import { FrontendCode } from "@geo/proto";

/** Rows gathered for one region before they leave as one CopyData message. */
export const BATCH_BYTES = 64 * 1024;

/**
 * The rows routed to one region, gathered into one CopyData message: a message per row would
 * cost a socket write per row, and the region reads them the same either way (COPY data is a
 * byte stream; message boundaries mean nothing in it).
 */
export class CopyDataBatch {
  private buffer: Buffer = Buffer.allocUnsafe(5 + BATCH_BYTES);
  private used = 5;

  get empty(): boolean {
    return this.used === 5;
  }

  /**
   * Adds `bytes` (copied); returns the full message to send first when they do not fit. A row
   * longer than a batch leaves as a message of its own.
   */
  add(bytes: Buffer): Buffer | null {
    if (this.used + bytes.length <= this.buffer.length) {
      bytes.copy(this.buffer, this.used);
      this.used += bytes.length;
      return null;
    }
    const full = this.take();
    if (bytes.length > BATCH_BYTES) {
      const alone = Buffer.allocUnsafe(5 + bytes.length);
      bytes.copy(alone, 5);
      return full === null ? frame(alone, alone.length) : Buffer.concat([full, frame(alone, alone.length)]);
    }
    bytes.copy(this.buffer, this.used);
    this.used += bytes.length;
    return full;
  }

  /** The gathered rows as one CopyData message, or null when there are none. */
  take(): Buffer | null {
    if (this.empty) return null;
    const message = frame(this.buffer, this.used);
    // The socket keeps the message until it is sent: the next rows go to a new buffer.
    this.buffer = Buffer.allocUnsafe(5 + BATCH_BYTES);
    this.used = 5;
    return message;
  }
}

function frame(buffer: Buffer, used: number): Buffer {
  buffer[0] = FrontendCode.CopyData;
  buffer.writeInt32BE(used - 1, 1);
  return buffer.subarray(0, used);
}
