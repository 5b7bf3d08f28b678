import type { BackendConnection, FrameReceiver, Lease } from "@geo/pool";
import type { Frame, PgError } from "@geo/proto";

/**
 * Who reads a leg's frames instead of the session's relay while the proxy reads an answer itself
 * (a scatter's region): told every frame, and told first when the connection breaks.
 */
export interface LegConsumer {
  onFrame(frame: Frame): void;
  onBroken(error: PgError): void;
}

/**
 * One backend connection a session holds in one region: for one statement, for a transaction
 * (from its first statement until ReadyForQuery says idle), or for the whole session while
 * pinned (LISTEN, WITH HOLD cursors, temp tables, advisory locks).
 */
export class Leg {
  /** Units of this leg waiting in the session's output queue. */
  outstanding = 0;
  /** A cancel was aimed at it: it never goes back to the pool, so a late cancel cannot hit another client. */
  retire = false;
  /** Set once the connection broke. */
  broken: PgError | null = null;
  /** The server's FATAL (or PANIC) on this connection went to the client as an answer of its. */
  fatalRelayed = false;
  /** The transaction block this leg opened wrote something. */
  wrote = false;
  /** Writes made so far: a marker taken after one write tells whether anything followed it. */
  writeCount = 0;
  private readonly unsubscribe: () => void;
  private onIdle: (() => void) | null = null;
  /** The receiver that hands frames to the session (the relay): the one set while nobody diverts them. */
  private readonly own: FrameReceiver;
  private consumer: LegConsumer | null = null;

  constructor(
    readonly region: string,
    readonly lease: Lease,
    onFrame: (leg: Leg, frame: Frame) => void,
    onBroken: (leg: Leg, error: PgError) => void,
    /** The replica it reads from (`host:port`), or undefined for the region's primary. */
    readonly replica?: string,
  ) {
    this.own = { onFrame: (frame) => onFrame(this, frame) };
    lease.connection.setReceiver(this.own);
    this.unsubscribe = lease.connection.onBroken((error) => {
      this.broken = error;
      // The consumer reading an answer hears it first: its reader wakes with the region's error.
      this.consumer?.onBroken(error);
      onBroken(this, error);
    });
  }

  /**
   * Frames go to `consumer` until `restore`: the same connection receiver, swapped, so the hot
   * path through the relay pays nothing for it.
   */
  divert(consumer: LegConsumer): void {
    this.consumer = consumer;
    this.connection.setReceiver(consumer);
  }

  /** Frames go to the session's relay again (after a consumer, or after the proxy read an answer itself). */
  restore(): void {
    this.consumer = null;
    this.connection.setReceiver(this.own);
  }

  /** True while a consumer reads the frames. */
  get diverted(): boolean {
    return this.consumer !== null;
  }

  get connection(): BackendConnection {
    return this.lease.connection;
  }

  get busy(): boolean {
    return this.outstanding > 0;
  }

  /** One of its outstanding answers is complete (the relay's count). */
  answered(): void {
    this.outstanding--;
    if (this.outstanding > 0 || this.onIdle === null) return;
    const onIdle = this.onIdle;
    this.onIdle = null;
    onIdle();
  }

  /** Calls `callback` once no answer is outstanding (replacing an earlier callback). */
  whenIdle(callback: () => void): void {
    this.onIdle = callback;
  }

  /** False when the connection's socket buffer is full: wait for `connection.drained()`. */
  write(bytes: Buffer | readonly Buffer[]): boolean {
    this.writeCount++;
    return this.connection.write(bytes);
  }

  /** Closes the connection instead of giving it back for reuse. */
  close(reason: string): void {
    this.unsubscribe();
    this.lease.discard(reason);
  }

  /**
   * Gives the connection back: discarded when broken, cancelled or holding unknown state; reset
   * with DISCARD ALL when `full` (pinned objects, an unknown transaction state).
   */
  release(full: boolean): void {
    this.unsubscribe();
    if (this.broken !== null || this.retire) {
      this.lease.discard(this.broken !== null ? "broken" : "cancelled");
      return;
    }
    this.lease.release(full ? { reset: true } : {});
  }
}
