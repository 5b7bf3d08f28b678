import { connect, type Socket } from "node:net";
import { BackendFramer, encodeQuery, encodeStartupMessage, isProtocolFault } from "@geo/proto";

/** 'Z', 'K': the backend codes this client watches for. */
const READY_FOR_QUERY = 0x5a;
const BACKEND_KEY_DATA = 0x4b;

/**
 * A client that keeps every byte the server sends, for tests that compare two servers' answers
 * byte for byte. It logs in with trust and reads nothing into messages beyond the framing needed
 * to see where an exchange ends (ReadyForQuery).
 */
export class ByteClient {
  private readonly framer = new BackendFramer();
  private chunks: Buffer[] = [];
  private waiter: (() => void) | null = null;
  private readies = 0;
  private closedByServer = false;
  processId = 0;
  secretKey = Buffer.alloc(0);

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.closedByServer = true;
      this.wake();
    });
  }

  static async connect(port: number, parameters: Record<string, string> = {}): Promise<ByteClient> {
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const client = new ByteClient(socket);
    socket.write(
      encodeStartupMessage({ parameters: { user: "postgres", database: "postgres", ...parameters } }),
    );
    await client.untilReady(1, 10_000);
    client.chunks = [];
    return client;
  }

  get closed(): boolean {
    return this.closedByServer;
  }

  /** Sends `bytes` and returns every byte received until `readies` ReadyForQuery (or the close). */
  async exchange(bytes: Buffer, readies = 1, timeoutMs = 20_000): Promise<Buffer> {
    this.chunks = [];
    this.socket.write(bytes);
    await this.untilReady(readies, timeoutMs);
    const answer = Buffer.concat(this.chunks);
    this.chunks = [];
    return this.closedByServer ? Buffer.concat([answer, Buffer.from("(closed)")]) : answer;
  }

  /** One simple Query's answer, as bytes. */
  query(sql: string, timeoutMs?: number): Promise<Buffer> {
    return this.exchange(encodeQuery({ sql }), 1, timeoutMs);
  }

  /** Sends a Query without waiting; `answer` reads it. */
  send(sql: string): void {
    this.chunks = [];
    this.socket.write(encodeQuery({ sql }));
  }

  /** Everything up to the next ReadyForQuery of what `send` asked. */
  async answer(timeoutMs = 20_000): Promise<Buffer> {
    await this.untilReady(1, timeoutMs);
    const answer = Buffer.concat(this.chunks);
    this.chunks = [];
    return this.closedByServer ? Buffer.concat([answer, Buffer.from("(closed)")]) : answer;
  }

  /** Stops reading the socket for `ms` (the server's writes back up meanwhile), then reads again. */
  holdReading(ms: number): void {
    this.socket.pause();
    setTimeout(() => this.socket.resume(), ms);
  }

  close(): void {
    this.socket.destroy();
  }

  private async untilReady(readies: number, timeoutMs: number): Promise<void> {
    const target = this.readies + readies;
    const deadline = Date.now() + timeoutMs;
    while (this.readies < target && !this.closedByServer) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ReadyForQuery within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(Buffer.from(chunk));
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) throw new Error(frame.message);
      if (frame.code === READY_FOR_QUERY) this.readies++;
      if (frame.code === BACKEND_KEY_DATA) {
        this.processId = frame.payload.readInt32BE(0);
        this.secretKey = Buffer.from(frame.payload.subarray(4));
      }
    }
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
