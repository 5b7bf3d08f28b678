import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";

export interface Cancellable {
  cancel(): void;
}

/**
 * The proxy's own BackendKeyData: each session gets a process id unique in this proxy and a
 * random secret. A CancelRequest quoting both cancels what that session runs at that moment.
 */
export class CancelRegistry {
  private readonly sessions = new Map<number, { secret: Buffer; session: Cancellable }>();

  /**
   * `processId`: the one to report when the session has a backend of its own (its pid), unless
   * another session of this proxy already has it (the same pid on another region's server).
   */
  register(session: Cancellable, processId?: number): { processId: number; secretKey: Buffer } {
    if (processId === undefined || processId <= 0 || this.sessions.has(processId))
      processId = randomInt(1, 0x7fffffff);
    while (this.sessions.has(processId)) processId = randomInt(1, 0x7fffffff);
    const secretKey = randomBytes(4);
    this.sessions.set(processId, { secret: secretKey, session });
    return { processId, secretKey };
  }

  unregister(processId: number): void {
    this.sessions.delete(processId);
  }

  /** True when the key matched a session (which was then asked to cancel). */
  cancel(processId: number, secretKey: Buffer): boolean {
    const entry = this.sessions.get(processId);
    if (entry === undefined || entry.secret.length !== secretKey.length) return false;
    if (!timingSafeEqual(entry.secret, secretKey)) return false;
    entry.session.cancel();
    return true;
  }
}
