import type { BackendConnection } from "@geo/pool";
import { BackendCode, decodeErrorResponse, type Frame, isProtocolFault, PgError } from "@geo/proto";
import type { Leg, LegConsumer } from "../executor/leg.js";
import { regionLost } from "./errors.js";

/** One backend message, copied out of the connection's read buffer. */
export interface Message {
  readonly code: number;
  readonly payload: Buffer;
}

/** Rows held per region before its connection stops being read: the one pending batch. */
export const BATCH_ROWS = 256;

/**
 * A region's leg while a scatter reads it: the leg's frames are diverted (`Leg.divert`, the same
 * push receiver that feeds the relay) into a queue read in order. Once a batch of rows waits
 * unread the socket is paused, so a region that answers faster than the merge consumes never holds
 * more than one batch in the proxy.
 *
 * Why a queue of its own rather than relay units: the relay forwards one leg's answer at a time,
 * in the client's order, untouched; a scatter reads several legs at once and pulls from whichever
 * the merge needs next (the region with the smallest sort key, the next region of a
 * concatenation), then answers the client with rows of its own. So the frames are the leg's, and
 * only the reading is pull-shaped. Each message is copied once as it arrives, because it outlives
 * the callback (the read buffer is reused), as it was before.
 */
export class RegionChannel implements LegConsumer {
  private readonly queue: Message[] = [];
  private head = 0;
  private waiter: (() => void) | null = null;
  private queuedRows = 0;
  private failure: PgError | null = null;
  private readonly preludes: { readonly onFailure: (error: PgError) => void; error: PgError | null }[] = [];
  /** Sync messages written whose ReadyForQuery has not been read. */
  syncsPending = 0;
  /** The transaction status of the last ReadyForQuery read. */
  status: string | null = null;
  /** A cancel was sent: the connection must not go back to the pool as if nothing happened. */
  cancelled = false;
  /** Extended messages were written since the last Sync: a Sync must end them. */
  open = false;

  readonly region: string;
  readonly connection: BackendConnection;

  constructor(readonly leg: Leg) {
    this.region = leg.region;
    this.connection = leg.connection;
    leg.divert(this);
    const broken = leg.broken ?? this.connection.brokenError;
    if (broken !== null) this.failure = regionLost(this.region, broken);
  }

  /** A message is waiting: reading it will not wait for the region. */
  get ready(): boolean {
    return this.head < this.queue.length;
  }

  get broken(): boolean {
    return this.failure !== null;
  }

  write(bytes: Buffer | readonly Buffer[]): void {
    if (this.failure !== null) return;
    this.open = true;
    this.connection.write(bytes);
  }

  /** Writes a Sync and remembers to read its ReadyForQuery. */
  sync(sync: Buffer): void {
    if (this.failure !== null) return;
    this.syncsPending++;
    this.connection.write(sync);
    this.open = false;
  }

  /**
   * Writes a simple Query that must succeed before the statements written after it count (the
   * client's settings): no waiting for it, so it travels with them. Its replies are read and
   * dropped by `next`; an error in it fails the channel once its ReadyForQuery arrives.
   */
  prelude(query: Buffer, onFailure: (error: PgError) => void): void {
    if (this.failure !== null) return;
    this.syncsPending++;
    this.preludes.push({ onFailure, error: null });
    this.connection.write(query);
  }

  /** Writes a simple Query; its replies are read with `next`, up to its ReadyForQuery. */
  query(query: Buffer): void {
    if (this.failure !== null) return;
    this.syncsPending++;
    this.connection.write(query);
  }

  /** The scatter is done reading: the leg's frames go to the session's relay again. */
  detach(): void {
    this.leg.restore();
    if (this.connection.isPaused) this.connection.resume();
  }

  /** The next message; rejects with the region-named error when the connection broke. */
  async next(): Promise<Message> {
    for (;;) {
      const message = this.queue[this.head];
      if (message !== undefined) {
        this.queue[this.head] = undefined as unknown as Message;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        if (message.code === BackendCode.DataRow) {
          this.queuedRows--;
          if (this.queuedRows < BATCH_ROWS / 2 && this.connection.isPaused) this.connection.resume();
        }
        if (message.code === BackendCode.ReadyForQuery) {
          this.syncsPending--;
          this.status = String.fromCharCode(message.payload[0] ?? 0x49);
        }
        const prelude = this.preludes[0];
        if (prelude !== undefined) {
          if (message.code === BackendCode.ErrorResponse) prelude.error ??= errorOf(message);
          if (message.code !== BackendCode.ReadyForQuery) continue;
          this.preludes.shift();
          if (prelude.error !== null) {
            prelude.onFailure(prelude.error);
            throw prelude.error;
          }
          // Nothing written after it: the reader is settling the channel and waits for this one.
          if (this.syncsPending === 0) return message;
          continue;
        }
        return message;
      }
      if (this.failure !== null) throw this.failure;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** Reads up to and including the ReadyForQuery of every Sync written (the connection is then quiet). */
  async settle(): Promise<void> {
    while (this.syncsPending > 0 && this.failure === null) {
      try {
        await this.next();
      } catch {
        // A failed prelude throws once; the replies after it still have to be read.
      }
    }
  }

  /**
   * Asks the server to stop what runs there now (another region failed, the client cancelled or
   * left). The leg is retired: a late cancel must never reach another client's statement.
   */
  cancel(): void {
    if (this.failure !== null || (this.syncsPending === 0 && !this.open)) return;
    this.cancelled = true;
    this.leg.retire = true;
    this.connection.cancel().catch(() => undefined);
  }

  /** @internal The leg's frames while diverted. */
  onFrame(frame: Frame): void {
    this.queue.push({ code: frame.code, payload: Buffer.from(frame.payload) });
    if (frame.code === BackendCode.DataRow && ++this.queuedRows >= BATCH_ROWS) this.connection.pause();
    this.wake();
  }

  /** @internal The leg's connection broke while diverted. */
  onBroken(error: PgError): void {
    this.failure = regionLost(this.region, error);
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** The PostgreSQL error an ErrorResponse carries. */
export function errorOf(message: Message): PgError {
  const decoded = decodeErrorResponse(message.payload);
  if (isProtocolFault(decoded)) return new PgError({ code: "XX000", message: decoded.message });
  return PgError.fromFields(decoded.fields);
}
