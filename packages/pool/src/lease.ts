import type { BackendConnection } from "./backend-connection.js";
import type { ResetKind } from "./reset-kind.js";

/** What `Lease.release` accepts: `true` asks for a full reset. */
export interface ReleaseOptions {
  readonly reset?: boolean | ResetKind | undefined;
}

/** The pool side of a lease. */
export interface LeaseOwner {
  giveBack(connection: BackendConnection, reset: boolean | ResetKind | undefined): void;
  discardLeased(connection: BackendConnection, reason: string): void;
}

/**
 * One checkout: exclusive use of `connection` until `release()` or `discard()` (the first call
 * wins; later calls do nothing). `await using lease = await pool.acquire()` releases it when the
 * scope ends.
 */
export class Lease implements AsyncDisposable {
  private done = false;

  constructor(
    private readonly owner: LeaseOwner,
    /** The backend connection, yours until release. */
    readonly connection: BackendConnection,
    /** How long the checkout waited, in ms (0 when an idle connection was at hand). */
    readonly waitedMs: number,
  ) {}

  /** True until released or discarded. */
  get active(): boolean {
    return !this.done;
  }

  /**
   * Gives the connection back. A broken or mid-reply connection is discarded; one whose session
   * changed (`reset`, or marked dirty) is reset in the background before anyone else gets it.
   */
  release(options: ReleaseOptions = {}): void {
    if (this.done) return;
    this.done = true;
    this.detach();
    this.owner.giveBack(this.connection, options.reset);
  }

  /** Closes the connection instead of returning it (its state is unknown or unwanted). */
  discard(reason = "discarded by its user"): void {
    if (this.done) return;
    this.done = true;
    this.detach();
    this.owner.discardLeased(this.connection, reason);
  }

  /** The next holder starts with no receiver and a socket that reads (the last one may have paused it). */
  private detach(): void {
    this.connection.setReceiver(null);
    this.connection.resume();
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.release();
    return Promise.resolve();
  }
}
