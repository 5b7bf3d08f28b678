import type { RegionId } from "../config/types.js";

/**
 * Where each key lives. The keyspace is table-independent: every geo-partitioned table's rows
 * with key `k` live in `lookup(k)`, because rows that share a key are joined on it.
 *
 * Keys are text: an integer key is looked up by its canonical decimal form (see `canonicalKey`).
 * The in-memory directory implements this; the persisted and shared stores implement it too.
 */
export interface Directory {
  /** The region the key was placed in, or undefined when it has no entry (see `placeKey`). */
  lookup(key: string): RegionId | undefined;
  readonly size: number;
  entries(): IterableIterator<[string, RegionId]>;
}

/** A directory that can change: keys are created, moved and forgotten. */
export interface MutableDirectory extends Directory {
  assign(key: string, region: RegionId): void;
  remove(key: string): boolean;
}
