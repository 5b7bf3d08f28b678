import type { RegionId } from "../config/types.js";
import type { MutableDirectory } from "./directory.js";

/** A directory held in a Map: what `keys.tsv` loads into, and what tests build by hand. */
export class MemoryDirectory implements MutableDirectory {
  private readonly map: Map<string, RegionId>;

  constructor(entries: Iterable<readonly [string, RegionId]> = []) {
    this.map = new Map(entries as Iterable<[string, RegionId]>);
  }

  lookup(key: string): RegionId | undefined {
    return this.map.get(key);
  }

  get size(): number {
    return this.map.size;
  }

  entries(): IterableIterator<[string, RegionId]> {
    return this.map.entries();
  }

  assign(key: string, region: RegionId): void {
    this.map.set(key, region);
  }

  remove(key: string): boolean {
    return this.map.delete(key);
  }
}
