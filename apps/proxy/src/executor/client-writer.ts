import type { Socket } from "node:net";

/**
 * Writes to a client socket, batching every write made in one tick into one send (cork until
 * the next tick), and tells whoever relays into it when to hold off: `write` returns false once
 * the socket's buffer passes its high-water mark, and `onDrain` fires when it empties again.
 */
export class ClientWriter {
  private corked = false;
  private drainWaiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on("drain", () => this.flushDrainWaiters());
    socket.on("close", () => this.flushDrainWaiters());
  }

  get closed(): boolean {
    return this.socket.destroyed || !this.socket.writable;
  }

  /** Queues bytes for the client; false when the caller should pause its source until `onDrain`. */
  write(bytes: Buffer): boolean {
    if (this.closed) return true;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(uncork, this);
    }
    return this.socket.write(bytes);
  }

  /** Calls `resume` once the socket's buffer has drained (or the socket closed). */
  onDrain(resume: () => void): void {
    if (!this.socket.writableNeedDrain || this.closed) {
      resume();
      return;
    }
    this.drainWaiters.push(resume);
  }

  private flushDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }

  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }
}

function uncork(writer: ClientWriter): void {
  writer.uncork();
}
