/**
 * A bounded map with an approximate LRU policy (CLOCK): a hit only sets a flag, so the hot path
 * never reorders the map; eviction gives each recently used entry one more pass before dropping it.
 */
export class ShapeCache<V> {
  readonly #entries = new Map<string, { value: V; used: boolean }>();
  readonly capacity: number;
  hits = 0;
  misses = 0;

  constructor(capacity: number) {
    this.capacity = Math.max(0, Math.floor(capacity));
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    entry.used = true;
    return entry.value;
  }

  /** Like `get`, but a miss is not counted (for a look-up that has a slower path behind it). */
  peek(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(key: string, value: V): void {
    if (this.capacity === 0) return;
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      existing.value = value;
      return;
    }
    while (this.#entries.size >= this.capacity) this.#evictOne();
    this.#entries.set(key, { value, used: false });
  }

  #evictOne(): void {
    for (const [key, entry] of this.#entries) {
      this.#entries.delete(key);
      if (entry.used) {
        entry.used = false;
        this.#entries.set(key, entry);
        continue;
      }
      return;
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
