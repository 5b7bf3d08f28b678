import { connect, type Socket } from "node:net";
import { BackendFramer, type BackendMessage, decodeBackendMessage, isProtocolFault } from "@geo/proto";

/**
 * A bare socket to the proxy that reads backend messages one at a time, for tests that send bytes
 * no driver would (startup variants, malformed messages, unframed 'N' answers).
 */
export class WireClient {
  private readonly framer = new BackendFramer();
  private readonly queue: BackendMessage[] = [];
  private waiters: (() => void)[] = [];
  private ended = false;
  private rawBytes: Buffer[] = [];
  private expectRaw = 0;

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("close", () => {
      this.ended = true;
      this.wake();
    });
    socket.on("error", () => undefined);
  }

  static connect(port: number): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new WireClient(socket)));
      socket.once("error", reject);
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Reads `count` unframed bytes (the answer to SSLRequest / GSSENCRequest). */
  async raw(count: number): Promise<Buffer> {
    this.expectRaw = count;
    await this.until(() => Buffer.concat(this.rawBytes).length >= count || this.ended);
    const bytes = Buffer.concat(this.rawBytes);
    this.rawBytes = [];
    this.expectRaw = 0;
    return bytes;
  }

  async next(timeoutMs = 5000): Promise<BackendMessage | null> {
    await this.until(() => this.queue.length > 0 || this.ended, timeoutMs);
    return this.queue.shift() ?? null;
  }

  /** Messages up to and including the next ReadyForQuery (or the close). */
  async untilReady(timeoutMs = 5000): Promise<BackendMessage[]> {
    const out: BackendMessage[] = [];
    for (;;) {
      const message = await this.next(timeoutMs);
      if (message === null) return out;
      out.push(message);
      if (message.type === "ReadyForQuery") return out;
    }
  }

  async waitClosed(timeoutMs = 5000): Promise<void> {
    await this.until(() => this.ended, timeoutMs);
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.expectRaw > 0) {
      this.rawBytes.push(chunk);
      this.wake();
      return;
    }
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) throw new Error(frame.message);
      const message = decodeBackendMessage(frame);
      if (isProtocolFault(message)) throw new Error(message.message);
      this.queue.push(message);
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private async until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timed out waiting for the proxy");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
