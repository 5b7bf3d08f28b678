import type { Socket } from "node:net";
import { Duplex } from "node:stream";

/**
 * A socket seen through a stream that first replays bytes already read from it. Direct TLS is
 * recognised by reading the first byte (0x16, a TLS handshake record); the TLS layer must then see
 * that ClientHello from its start, and a TLS socket built on the raw socket's handle would skip
 * bytes already read into JavaScript.
 */
export class ReplayStream extends Duplex {
  constructor(
    private readonly socket: Socket,
    prefix: Buffer,
  ) {
    super();
    this.push(prefix);
    socket.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on("end", () => this.push(null));
    socket.on("error", (error) => this.destroy(error));
    socket.on("close", () => this.destroy());
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}
