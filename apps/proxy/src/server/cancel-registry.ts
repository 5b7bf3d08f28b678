import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { stampWorker, workerOfSecret } from "./worker-key.js";

export interface Cancellable {
  cancel(): void;
}

/** The other workers of this proxy, for a CancelRequest quoting a key one of them issued. */
export interface CancelWorkers {
  /** This process's worker index, 1..MAX_WORKERS. */
  readonly index: number;
  /** Passes a request for worker `index` on (through the primary), which cancels it as its own. */
  forward(index: number, processId: number, secretKey: Buffer): void;
}

/** `cancelled`: a session here matched; `unmatched`: none did; `forwarded`: sent to its worker. */
export type CancelOutcome = "cancelled" | "unmatched" | "forwarded";

/**
 * The proxy's own BackendKeyData: each session gets a process id unique in this proxy and a
 * random secret. A CancelRequest quoting both cancels what that session runs at that moment.
 * With workers, the secret also names the worker that issued it (worker-key.ts).
 */
export class CancelRegistry {
  private readonly sessions = new Map<number, { secret: Buffer; session: Cancellable }>();

  constructor(private readonly workers?: CancelWorkers) {}

  /**
   * `processId`: the one to report when the session has a backend of its own (its pid), unless
   * another session of this proxy already has it (the same pid on another region's server).
   */
  register(session: Cancellable, processId?: number): { processId: number; secretKey: Buffer } {
    if (processId === undefined || processId <= 0 || this.sessions.has(processId))
      processId = randomInt(1, 0x7fffffff);
    while (this.sessions.has(processId)) processId = randomInt(1, 0x7fffffff);
    const secretKey = randomBytes(4);
    if (this.workers !== undefined) stampWorker(secretKey, this.workers.index);
    this.sessions.set(processId, { secret: secretKey, session });
    return { processId, secretKey };
  }

  unregister(processId: number): void {
    this.sessions.delete(processId);
  }

  /** A CancelRequest as a client sent it: cancelled here, or sent on to the worker that issued the key. */
  cancel(processId: number, secretKey: Buffer): CancelOutcome {
    const owner = this.workers === undefined ? undefined : workerOfSecret(secretKey);
    if (this.workers !== undefined && owner !== undefined && owner !== this.workers.index) {
      this.workers.forward(owner, processId, secretKey);
      return "forwarded";
    }
    return this.cancelHere(processId, secretKey) ? "cancelled" : "unmatched";
  }

  /** True when the key matched a session of this process (which was then asked to cancel). */
  cancelHere(processId: number, secretKey: Buffer): boolean {
    const entry = this.sessions.get(processId);
    if (entry === undefined || entry.secret.length !== secretKey.length) return false;
    if (!timingSafeEqual(entry.secret, secretKey)) return false;
    entry.session.cancel();
    return true;
  }
}
