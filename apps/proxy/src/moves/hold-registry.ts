import type { PgError } from "@geo/proto";
import { heldInTransaction, heldTooLong } from "./move-errors.js";

/** What a statement may touch: nothing placed by key, some keys, or any key at all. */
export type Touch =
  | { readonly kind: "none" }
  | { readonly kind: "keys"; readonly keys: readonly string[] }
  | { readonly kind: "any" };

/**
 * What a hold stops: `writes` (while a move copies, reads of its keys still run where the rows
 * are), or `all` (before the move commits, and from then until the directory points at the
 * destination, reads wait too).
 */
export type HoldMode = "writes" | "all";

/** A move's hold: statements for its keys wait until it is released. */
export interface Hold {
  readonly keys: ReadonlySet<string>;
  readonly mode: HoldMode;
  /** From now on reads of the keys wait too (a hold of `writes` becomes one of `all`). */
  holdReads(): void;
  release(): void;
}

/** An admitted statement: counted as in flight until released. */
export interface Ticket {
  release(): void;
}

interface ActiveHold extends Hold {
  readonly released: Promise<void>;
}

/** Statements under way: all of them, and those that may write. */
interface InFlight {
  all: number;
  writes: number;
}

const NO_TICKET: Ticket = { release() {} };

/**
 * Keys being moved, and statements under way on keys. A statement is admitted only when no move
 * holds its keys (or, touching any key, when no move is under way at all); a move, once it holds
 * its keys, waits for the statements already admitted on them to finish before it copies. So no
 * statement routed on the old directory reaches a region after the move that changed it.
 *
 * A hold has two steps: while the move copies it stops writes only (a read-only statement runs
 * where the rows still are, and waits for nothing), and before the commit it stops reads too and
 * waits for the reads under way. A statement that may write waits for either.
 */
export class HoldRegistry {
  private readonly holds = new Set<ActiveHold>();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly inFlightAny: InFlight = { all: 0, writes: 0 };
  private readonly drainWaiters = new Set<() => void>();

  /** Holds active now (moves of this proxy's and of peers it follows). */
  get moving(): number {
    return this.holds.size;
  }

  /** Statements admitted and not yet released: under way on geo-partitioned tables. */
  get statements(): number {
    return this.#statements;
  }

  #statements = 0;

  /** Holds `keys`: statements for them (writes only, with `writes`) wait from now until `release()`. */
  hold(keys: Iterable<string>, mode: HoldMode = "all"): Hold {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let current = mode;
    const hold: ActiveHold = {
      keys: new Set(keys),
      released,
      get mode() {
        return current;
      },
      holdReads: () => {
        current = "all";
      },
      release: () => {
        if (!this.holds.delete(hold)) return;
        release();
      },
    };
    this.holds.add(hold);
    return hold;
  }

  /**
   * Waits until no statement the hold stops (one that may write; with `all`, any) admitted before
   * it still runs on its keys; false when that took longer than `timeoutMs`.
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
    const count = (flight: InFlight | undefined): number =>
      flight === undefined ? 0 : hold.mode === "all" ? flight.all : flight.writes;
    if (count(this.inFlightAny) > 0) return false;
    for (const key of hold.keys) if (count(this.inFlight.get(key)) > 0) return false;
    return true;
  }

  /**
   * Admits a statement, waiting while a move holds what it touches. `inWork`: the statement's
   * transaction already did work, so it is refused at once rather than wait (it may hold locks
   * the move needs). Waiting longer than `holdMs` is refused too (40001 either way). `readsOnly`:
   * the statement cannot write (nor lock rows), so a hold of writes lets it through.
   */
  async admit(touch: Touch, holdMs: number, inWork: boolean, readsOnly = false): Promise<Ticket | PgError> {
    if (touch.kind === "none") return NO_TICKET;
    const deadline = Date.now() + holdMs;
    for (;;) {
      const blocking = this.blocking(touch, readsOnly);
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
    return this.enter(touch, readsOnly);
  }

  private blocking(touch: Touch, readsOnly: boolean): ActiveHold[] {
    if (this.holds.size === 0) return [];
    if (touch.kind === "none") return [];
    const stops = (hold: ActiveHold): boolean => !readsOnly || hold.mode === "all";
    if (touch.kind === "any") return [...this.holds].filter(stops);
    return [...this.holds].filter((hold) => stops(hold) && touch.keys.some((key) => hold.keys.has(key)));
  }

  private enter(touch: Touch, readsOnly: boolean): Ticket {
    const writes = readsOnly ? 0 : 1;
    this.#statements++;
    if (touch.kind === "any") {
      this.inFlightAny.all++;
      this.inFlightAny.writes += writes;
    } else if (touch.kind === "keys")
      for (const key of touch.keys) {
        const flight = this.inFlight.get(key);
        if (flight === undefined) this.inFlight.set(key, { all: 1, writes });
        else {
          flight.all++;
          flight.writes += writes;
        }
      }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#statements--;
        if (touch.kind === "any") {
          this.inFlightAny.all--;
          this.inFlightAny.writes -= writes;
        } else if (touch.kind === "keys") {
          for (const key of touch.keys) {
            const flight = this.inFlight.get(key);
            if (flight === undefined) continue;
            flight.all--;
            flight.writes -= writes;
            if (flight.all <= 0) this.inFlight.delete(key);
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
