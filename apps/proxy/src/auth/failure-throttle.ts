export interface FailureThrottleOptions {
  /** Delay before answering an address's first failure; doubled for each further one. */
  readonly baseMs: number;
  readonly maxMs: number;
  /** Failures are forgotten after this long without another from the same address. */
  readonly windowMs: number;
  /** Addresses tracked at most; the least recently failing is forgotten first. */
  readonly maxAddresses?: number | undefined;
  readonly now?: (() => number) | undefined;
}

interface Record {
  failures: number;
  last: number;
}

/**
 * Slows down password guessing: each failed login from an address is answered only after a delay
 * that doubles with that address's recent failures (base, 2 x base, 4 x base ... up to the
 * maximum). The delay is spent before the failure is sent, so a guesser waits for each answer; a
 * successful login clears the address.
 */
export class FailureThrottle {
  private readonly records = new Map<string, Record>();
  private readonly now: () => number;
  private readonly maxAddresses: number;

  constructor(private readonly options: FailureThrottleOptions) {
    this.now = options.now ?? Date.now;
    this.maxAddresses = options.maxAddresses ?? 100_000;
  }

  /** Records a failure from `address`; returns how long to wait before answering it. */
  failed(address: string): number {
    const now = this.now();
    let record = this.records.get(address);
    if (record === undefined || now - record.last > this.options.windowMs)
      record = { failures: 0, last: now };
    record.failures += 1;
    record.last = now;
    this.records.delete(address);
    if (this.records.size >= this.maxAddresses) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
    this.records.set(address, record);
    return this.delayAfter(record.failures);
  }

  succeeded(address: string): void {
    this.records.delete(address);
  }

  /** Recent failures from `address`. */
  failures(address: string): number {
    const record = this.records.get(address);
    if (record === undefined || this.now() - record.last > this.options.windowMs) return 0;
    return record.failures;
  }

  private delayAfter(failures: number): number {
    if (this.options.baseMs === 0) return 0;
    const exponent = Math.min(failures - 1, 30);
    return Math.min(this.options.baseMs * 2 ** exponent, this.options.maxMs);
  }
}
