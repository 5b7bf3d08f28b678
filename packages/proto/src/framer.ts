import { STARTUP_FRAME_CODE, StartupRequestCode } from "./codes.js";
import { FaultReason, type ProtocolFault, protocolFault } from "./fault.js";

/**
 * One message cut out of the stream. `bytes` is the whole message as sent (code byte, length word,
 * body); `payload` is the body alone. Both are views, not copies: they stay valid until the next
 * `push()` (the framer never rewrites bytes it handed out, but the caller's own chunks may be
 * reused by a socket library). Copy with `Buffer.from(view)` if a message must outlive that.
 */
export interface Frame {
  /** The code byte, or `STARTUP_FRAME_CODE` (0) for a startup-phase packet. */
  readonly code: number;
  readonly payload: Buffer;
  readonly bytes: Buffer;
}

/** A frame that owns its bytes, for messages that must outlive the next `push()`. */
export function copyFrame(frame: Frame): Frame {
  const bytes = Buffer.from(frame.bytes);
  return { code: frame.code, payload: bytes.subarray(bytes.length - frame.payload.length), bytes };
}

/** The largest message either side accepts by default: PostgreSQL's own limit is 1 GiB - 1. */
export const DEFAULT_MAX_MESSAGE_LENGTH = 0x3fffffff;
/** PostgreSQL rejects startup packets longer than 10000 bytes; so do we. */
export const DEFAULT_MAX_STARTUP_LENGTH = 10_000;
/** Password and SASL messages before authentication: PostgreSQL caps auth tokens at 64 KiB. */
export const DEFAULT_MAX_AUTH_LENGTH = 65_536;

const MIN_GROWTH = 16 * 1024;

const EMPTY = Buffer.alloc(0);

/** The byte accumulator shared by both framers: offset/length cursors over one growing buffer. */
abstract class ByteStream {
  protected buf: Buffer = EMPTY;
  protected pos = 0;
  protected end = 0;
  private owned = false;
  protected failure: ProtocolFault | null = null;

  /**
   * Appends bytes read from the socket. Ignored once the framer is faulted. Bytes handed out
   * before are never overwritten: when more room is needed a new buffer is taken.
   */
  push(chunk: Buffer): void {
    if (this.failure !== null || chunk.length === 0) return;
    if (this.pos === this.end) {
      this.buf = chunk;
      this.pos = 0;
      this.end = chunk.length;
      this.owned = false;
      return;
    }
    const remaining = this.end - this.pos;
    if (this.owned && this.buf.length - this.end >= chunk.length) {
      chunk.copy(this.buf, this.end);
      this.end += chunk.length;
      return;
    }
    const size = Math.max(MIN_GROWTH, (remaining + chunk.length) * 2);
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, this.pos, this.end);
    chunk.copy(next, remaining);
    this.buf = next;
    this.pos = 0;
    this.end = remaining + chunk.length;
    this.owned = true;
  }

  /** How many bytes are buffered and not yet framed. */
  get bufferedLength(): number {
    return this.end - this.pos;
  }

  /**
   * Removes and returns (as a copy) every buffered byte not yet framed. Used when the stream
   * changes hands, e.g. after an SSLRequest: bytes that arrived before the TLS handshake were sent
   * in clear and must be refused, not read as if they were encrypted.
   */
  takeBuffered(): Buffer {
    const rest = Buffer.from(this.buf.subarray(this.pos, this.end));
    this.release();
    return rest;
  }

  /** The fault that stopped this framer, or null while it is healthy. */
  get fault(): ProtocolFault | null {
    return this.failure;
  }

  protected fail(reason: FaultReason, message: string): ProtocolFault {
    this.failure = protocolFault(reason, message);
    this.release();
    return this.failure;
  }

  protected release(): void {
    this.buf = EMPTY;
    this.pos = 0;
    this.end = 0;
    this.owned = false;
  }

  /** Cuts one typed message (code, int32 length, body) checked against `cap`. */
  protected nextTyped(cap: number, side: string): Frame | ProtocolFault | null {
    const available = this.end - this.pos;
    if (available < 5) return null;
    const buf = this.buf;
    const start = this.pos;
    const code = buf[start]!;
    const length = buf.readInt32BE(start + 1);
    if (length < 4) {
      return this.fail(FaultReason.lengthTooShort, `${side} message length ${length} is below 4`);
    }
    if (length > cap) {
      return this.fail(
        FaultReason.lengthTooLong,
        `${side} message length ${length} exceeds the limit ${cap}`,
      );
    }
    const total = length + 1;
    if (available < total) return null;
    this.pos = start + total;
    const frame: Frame = {
      code,
      payload: buf.subarray(start + 5, start + total),
      bytes: buf.subarray(start, start + total),
    };
    if (this.pos === this.end) this.release();
    return frame;
  }
}

export interface FrontendFramerOptions {
  /** Cap on startup-phase packets (default 10000 bytes). */
  readonly maxStartupLength?: number | undefined;
  /** Cap on typed messages until `markAuthenticated()` (default 65536 bytes). */
  readonly maxAuthLength?: number | undefined;
  /** Cap on typed messages once authenticated (default 1 GiB - 1). */
  readonly maxLength?: number | undefined;
}

/** Where a client connection stands, as far as framing is concerned. */
export type FrontendPhase = "startup" | "authentication" | "ready";

/**
 * Frames the bytes a client sends. Starts in the startup phase, where packets have a length but no
 * code byte (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest). A StartupMessage moves it
 * to typed messages on its own, since nothing untyped can follow one; `enterTypedPhase()` does the
 * same explicitly. Until `markAuthenticated()` typed messages are capped tightly.
 *
 * @example
 * ```ts
 * const framer = new FrontendFramer();
 * socket.on("data", (chunk) => {
 *   framer.push(chunk);
 *   for (let frame = framer.next(); frame !== null; frame = framer.next()) {
 *     if (isProtocolFault(frame)) return closeWith(frame);
 *     handle(frame);
 *   }
 * });
 * ```
 */
export class FrontendFramer extends ByteStream {
  private currentPhase: FrontendPhase = "startup";
  private readonly maxStartupLength: number;
  private readonly maxAuthLength: number;
  private maxLength: number;

  constructor(options: FrontendFramerOptions = {}) {
    super();
    this.maxStartupLength = options.maxStartupLength ?? DEFAULT_MAX_STARTUP_LENGTH;
    this.maxAuthLength = options.maxAuthLength ?? DEFAULT_MAX_AUTH_LENGTH;
    this.maxLength = options.maxLength ?? DEFAULT_MAX_MESSAGE_LENGTH;
  }

  get phase(): FrontendPhase {
    return this.currentPhase;
  }

  /** Reads typed messages from now on (after the StartupMessage), still under the auth cap. */
  enterTypedPhase(): void {
    if (this.currentPhase === "startup") this.currentPhase = "authentication";
  }

  /** Lifts the cap to `maxLength` once the client has authenticated. */
  markAuthenticated(): void {
    this.currentPhase = "ready";
  }

  /** Changes the cap used once authenticated. */
  setMaxLength(maxLength: number): void {
    this.maxLength = maxLength;
  }

  /** The next complete message, null when more bytes are needed, or the fault that ended the stream. */
  next(): Frame | ProtocolFault | null {
    if (this.failure !== null) return this.failure;
    switch (this.currentPhase) {
      case "startup":
        return this.nextStartup();
      case "authentication":
        return this.nextTyped(this.maxAuthLength, "client");
      case "ready":
        return this.nextTyped(this.maxLength, "client");
    }
  }

  private nextStartup(): Frame | ProtocolFault | null {
    const available = this.end - this.pos;
    if (available < 4) return null;
    const buf = this.buf;
    const start = this.pos;
    const length = buf.readInt32BE(start);
    // The length counts itself and the 4-byte request code or protocol version.
    if (length < 8) {
      return this.fail(FaultReason.lengthTooShort, `startup packet length ${length} is below 8`);
    }
    if (length > this.maxStartupLength) {
      return this.fail(
        FaultReason.lengthTooLong,
        `startup packet length ${length} exceeds the limit ${this.maxStartupLength}`,
      );
    }
    if (available < length) return null;
    const request = buf.readInt32BE(start + 4);
    this.pos = start + length;
    const frame: Frame = {
      code: STARTUP_FRAME_CODE,
      payload: buf.subarray(start + 4, start + length),
      bytes: buf.subarray(start, start + length),
    };
    if (
      request !== StartupRequestCode.SSLRequest &&
      request !== StartupRequestCode.GSSENCRequest &&
      request !== StartupRequestCode.CancelRequest
    ) {
      this.currentPhase = "authentication";
    }
    if (this.pos === this.end) this.release();
    return frame;
  }
}

export interface BackendFramerOptions {
  /** Cap on messages from the server (default 1 GiB - 1). */
  readonly maxLength?: number | undefined;
}

/**
 * A server's one-byte answer to SSLRequest ('S' accept, 'N' refuse) or GSSENCRequest ('G' accept,
 * 'N' refuse). 'E' means the server sent an ErrorResponse instead: the byte is left in place so
 * `next()` reads the error as a message.
 */
export type EncryptionResponse = "S" | "G" | "N" | "E";

/** Frames the bytes a server sends: typed messages from the first byte. */
export class BackendFramer extends ByteStream {
  private maxLength: number;

  constructor(options: BackendFramerOptions = {}) {
    super();
    this.maxLength = options.maxLength ?? DEFAULT_MAX_MESSAGE_LENGTH;
  }

  setMaxLength(maxLength: number): void {
    this.maxLength = maxLength;
  }

  /** The next complete message, null when more bytes are needed, or the fault that ended the stream. */
  next(): Frame | ProtocolFault | null {
    if (this.failure !== null) return this.failure;
    return this.nextTyped(this.maxLength, "server");
  }

  /**
   * Reads the single unframed byte a server answers SSLRequest or GSSENCRequest with. Any byte
   * other than 'S', 'G', 'N' or 'E' faults the stream.
   */
  nextEncryptionResponse(): EncryptionResponse | ProtocolFault | null {
    if (this.failure !== null) return this.failure;
    if (this.end - this.pos < 1) return null;
    const byte = this.buf[this.pos]!;
    switch (byte) {
      case 0x53:
      case 0x47:
      case 0x4e:
        this.pos += 1;
        if (this.pos === this.end) this.release();
        return byte === 0x53 ? "S" : byte === 0x47 ? "G" : "N";
      case 0x45:
        return "E";
      default:
        return this.fail(
          FaultReason.invalidValue,
          `unexpected answer byte 0x${byte.toString(16)} to an encryption request`,
        );
    }
  }
}
