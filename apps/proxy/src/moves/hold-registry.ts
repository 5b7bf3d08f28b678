import type { PgError } from "@geo/proto";
import { heldInTransaction, heldTooLong } from "./move-errors.js";

/** What a statement may touch: nothing placed by key, some keys, or any key at all. */
export type Touch =
  | { readonly kind: "none" }
  | { readonly kind: "keys"; readonly keys: readonly string[] }
  | { readonly kind: "any" };

/** A move's hold: statements for its keys wait until it is released. */
export interface Hold {
  readonly keys: ReadonlySet<string>;
  release(): void;
}

/** An admitted statement: counted as in flight until released. */
export interface Ticket {
  release(): void;
}

interface ActiveHold extends Hold {
  readonly released: Promise<void>;
}

const NO_TICKET: Ticket = { release() {} };

/**
 * Keys being moved, and statements under way on keys. A statement is admitted only when no move
 * holds its keys (or, touching any key, when no move is under way at all); a move, once it holds
 * its keys, waits for the statements already admitted on them to finish before it copies. So no
 * statement routed on the old directory reaches a region after the move that changed it.
 */
export class HoldRegistry {
  private readonly holds = new Set<ActiveHold>();
  private readonly inFlight = new Map<string, number>();
  private inFlightAny = 0;
  private readonly drainWaiters = new Set<() => void>();

  get moving(): number {
    return this.holds.size;
  }

  /** Holds `keys`: statements for them wait from now until `release()`. */
  hold(keys: Iterable<string>): Hold {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold: ActiveHold = {
      keys: new Set(keys),
      released,
      release: () => {
        if (!this.holds.delete(hold)) return;
        release();
      },
    };
    this.holds.add(hold);
    return hold;
  }

  /**
   * Waits until no statement admitted before the hold still runs on its keys; false when that
   * took longer than `timeoutMs`.
   */
  async drained(hold: Hold, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isDrained(hold)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.drainWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.drainWaiters.add(done);
      });
    }
    return true;
  }

  private isDrained(hold: Hold): boolean {
    if (this.inFlightAny > 0) return false;
    for (const key of hold.keys) if ((this.inFlight.get(key) ?? 0) > 0) return false;
    return true;
  }

  /**
   * Admits a statement, waiting while a move holds what it touches. `inWork`: the statement's
   * transaction already did work, so it is refused at once rather than wait (it may hold locks
   * the move needs). Waiting longer than `holdMs` is refused too (40001 either way).
   */
  async admit(touch: Touch, holdMs: number, inWork: boolean): Promise<Ticket | PgError> {
    if (touch.kind === "none") return NO_TICKET;
    const deadline = Date.now() + holdMs;
    for (;;) {
      const blocking = this.blocking(touch);
      if (blocking.length === 0) break;
      const keys =
        touch.kind === "keys"
          ? touch.keys.filter((key) => blocking.some((h) => h.keys.has(key)))
          : [...blocking[0]!.keys];
      if (inWork) return heldInTransaction(keys);
      const left = deadline - Date.now();
      if (left <= 0) return heldTooLong(keys, holdMs);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(blocking.map((hold) => hold.released)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
    return this.enter(touch);
  }

  private blocking(touch: Touch): ActiveHold[] {
    if (this.holds.size === 0) return [];
    if (touch.kind === "any") return [...this.holds];
    if (touch.kind === "none") return [];
    return [...this.holds].filter((hold) => touch.keys.some((key) => hold.keys.has(key)));
  }

  private enter(touch: Touch): Ticket {
    if (touch.kind === "any") this.inFlightAny++;
    else if (touch.kind === "keys")
      for (const key of touch.keys) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (touch.kind === "any") this.inFlightAny--;
        else if (touch.kind === "keys") {
          for (const key of touch.keys) {
            const count = (this.inFlight.get(key) ?? 1) - 1;
            if (count === 0) this.inFlight.delete(key);
            else this.inFlight.set(key, count);
          }
        }
        if (this.drainWaiters.size > 0) {
          const waiters = [...this.drainWaiters];
          this.drainWaiters.clear();
          for (const wake of waiters) wake();
        }
      },
    };
  }
}
