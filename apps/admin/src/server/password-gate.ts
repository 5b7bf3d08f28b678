import { createHash, timingSafeEqual } from "node:crypto";

/** How wrong answers lock an address out. */
export interface LockoutPolicy {
  /** Wrong answers in a row forgiven before the first lock (typos). */
  readonly freeFailures: number;
  /** Length of the first lock; each further wrong answer doubles it. */
  readonly firstLockMs: number;
  /** Longest lock. */
  readonly maxLockMs: number;
  /** An address with no wrong answer for this long starts afresh. */
  readonly forgetAfterMs: number;
  /** Addresses remembered at once; the longest-quiet is forgotten first. */
  readonly maxAddresses: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = {
  freeFailures: 3,
  firstLockMs: 1_000,
  maxLockMs: 15 * 60_000,
  forgetAfterMs: 24 * 60 * 60_000,
  maxAddresses: 10_000,
};

export type GateVerdict =
  | { readonly kind: "allowed" }
  | { readonly kind: "missing" }
  | { readonly kind: "wrong"; readonly lockedForMs: number }
  | { readonly kind: "locked"; readonly retryAfterMs: number };

interface FailureRecord {
  failures: number;
  lastFailureAt: number;
  lockedUntil: number;
}

/**
 * Checks the `Authorization` header of every request against one password, HTTP Basic (any user
 * name) or Bearer. Both sides are hashed first so `timingSafeEqual` compares equal lengths: the time
 * taken says nothing about the password, not even its length. A locked address is refused before
 * its answer is looked at, so guessing during a lock gains nothing.
 */
export class PasswordGate {
  readonly #digest: Buffer;
  readonly #now: () => number;
  readonly #policy: LockoutPolicy;
  readonly #records = new Map<string, FailureRecord>();

  constructor(password: string, now: () => number, policy: LockoutPolicy = DEFAULT_LOCKOUT) {
    this.#digest = sha256(password);
    this.#now = now;
    this.#policy = policy;
  }

  check(address: string, authorization: string | undefined): GateVerdict {
    const now = this.#now();
    const record = this.#recordOf(address, now);
    if (record !== undefined && record.lockedUntil > now) {
      return { kind: "locked", retryAfterMs: record.lockedUntil - now };
    }
    const candidate = authorization === undefined ? undefined : passwordFromHeader(authorization);
    if (candidate === undefined) return { kind: "missing" };
    if (timingSafeEqual(sha256(candidate), this.#digest)) {
      this.#records.delete(address);
      return { kind: "allowed" };
    }
    return { kind: "wrong", lockedForMs: this.#fail(address, record, now) };
  }

  /** Addresses remembered now (for tests and the bound on memory). */
  get rememberedAddresses(): number {
    return this.#records.size;
  }

  #recordOf(address: string, now: number): FailureRecord | undefined {
    const record = this.#records.get(address);
    if (record !== undefined && now - record.lastFailureAt >= this.#policy.forgetAfterMs) {
      this.#records.delete(address);
      return undefined;
    }
    return record;
  }

  #fail(address: string, existing: FailureRecord | undefined, now: number): number {
    const record = existing ?? { failures: 0, lastFailureAt: now, lockedUntil: 0 };
    record.failures += 1;
    record.lastFailureAt = now;
    const over = record.failures - this.#policy.freeFailures;
    const lockMs =
      over <= 0
        ? 0
        : Math.min(this.#policy.maxLockMs, this.#policy.firstLockMs * 2 ** Math.min(over - 1, 40));
    record.lockedUntil = now + lockMs;
    // Re-inserting keeps the map in order of last failure, so the first key is the longest quiet.
    this.#records.delete(address);
    this.#records.set(address, record);
    if (this.#records.size > this.#policy.maxAddresses) {
      const oldest = this.#records.keys().next();
      if (oldest.done !== true) this.#records.delete(oldest.value);
    }
    return lockMs;
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The password carried by `Basic base64(user:password)` or `Bearer password`; undefined otherwise. */
export function passwordFromHeader(header: string): string | undefined {
  const space = header.indexOf(" ");
  if (space <= 0) return undefined;
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (value === "") return undefined;
  switch (scheme) {
    case "bearer":
      return value;
    case "basic": {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      return colon < 0 ? undefined : decoded.slice(colon + 1);
    }
    default:
      return undefined;
  }
}
