/**
 * A small seeded generator (SplitMix32-style mixing over a 32-bit state), so the same seed gives
 * the same sequence on every machine and Node version; Math.random cannot be seeded.
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A generator for one statement: mixes the run's seed with the statement's index. */
  static forStatement(seed: number, index: number): Prng {
    return new Prng(mix32(mix32(seed >>> 0) ^ Math.imul(index + 1, 0x9e3779b1)));
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    return mix32(this.state);
  }

  /** An integer in [low, high], both inclusive. */
  int(low: number, high: number): number {
    if (high < low) throw new RangeError(`empty range [${low}, ${high}]`);
    return low + (this.nextUint32() % (high - low + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.nextUint32() / 0x1_0000_0000 < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[this.int(0, items.length - 1)]!;
  }

  /** `count` distinct items, in the order they were drawn. */
  pickDistinct<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const chosen: T[] = [];
    while (chosen.length < count && pool.length > 0) {
      chosen.push(pool.splice(this.int(0, pool.length - 1), 1)[0]!);
    }
    return chosen;
  }
}

function mix32(value: number): number {
  let z = value >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}
