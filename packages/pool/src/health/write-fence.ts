/**
 * The WAL position a session's write is known to lie before, for read-your-writes without an extra
 * query. Taken right after the write committed; it resolves at the first probe of the region's
 * primary that *started* after it was taken, to the position that probe read. Every byte of WAL the
 * commit produced precedes that position, so a replica whose replay position has reached it shows
 * the write. Until then the session's reads in the region stay on the primary.
 */
export class WriteFence {
  readonly region: string;
  /** Probe rounds numbered up to this one had already started when the fence was taken. */
  readonly afterRound: number;
  private position: bigint | undefined;
  private settledFlag = false;
  private readonly settle: (lsn: bigint | undefined) => void;
  /** Resolves to the position, or to undefined if the monitor stops first. Never rejects. */
  readonly settled: Promise<bigint | undefined>;

  /** @internal Created by `HealthMonitor.writeFence`. */
  constructor(region: string, afterRound: number) {
    this.region = region;
    this.afterRound = afterRound;
    let settle: (lsn: bigint | undefined) => void = () => {};
    this.settled = new Promise((resolve) => {
      settle = resolve;
    });
    this.settle = settle;
  }

  /** The primary's position at its first probe after the write; undefined until that probe. */
  get lsn(): bigint | undefined {
    return this.position;
  }

  /** True once the position is known. */
  get resolved(): boolean {
    return this.position !== undefined;
  }

  /** @internal */
  resolveAt(lsn: bigint): void {
    if (this.settledFlag) return;
    this.settledFlag = true;
    this.position = lsn;
    this.settle(lsn);
  }

  /** @internal */
  abandon(): void {
    if (this.settledFlag) return;
    this.settledFlag = true;
    this.settle(undefined);
  }
}
