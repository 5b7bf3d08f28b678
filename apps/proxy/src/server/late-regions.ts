import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";

export interface LateRegionsOptions {
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly log: Logger;
  /** How often a region still down is tried again. */
  readonly intervalMs: number;
  /**
   * The work a region's start-up owes it once it answers (directory catch-up, recovery of what a
   * previous run left prepared there). A rejection leaves the region pending: it is tried again.
   */
  readonly onReachable: (region: string) => Promise<void>;
}

/**
 * The regions whose primary did not answer when the proxy started. Each is tried again in the
 * background (one connection from its pool, as a statement would open it) until it answers; then
 * the start-up work it missed runs once and it leaves the set. Statements need no help from here:
 * they open their own connections and succeed as soon as the server is back; this only makes sure
 * the missed work is done.
 *
 * @example
 * ```ts
 * const late = new LateRegions({ topology, pools, log, intervalMs: 1000, onReachable: catchUp });
 * late.start(["us-east"]);
 * await late.close();
 * ```
 */
export class LateRegions {
  readonly #options: LateRegionsOptions;
  readonly #pending = new Map<string, { since: number; timer: NodeJS.Timeout | undefined }>();
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(options: LateRegionsOptions) {
    this.#options = options;
  }

  /** Regions still waiting for their first answer, by id. */
  get pending(): string[] {
    return [...this.#pending.keys()].sort();
  }

  /** Starts trying each region in the background; returns at once. */
  start(regions: readonly string[]): void {
    for (const region of regions) {
      if (this.#pending.has(region)) continue;
      this.#pending.set(region, { since: Date.now(), timer: undefined });
      this.#schedule(region);
    }
  }

  /** Stops trying; waits for an attempt in flight. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const entry of this.#pending.values()) clearTimeout(entry.timer);
    await Promise.all([...this.#running]);
  }

  #schedule(region: string): void {
    const entry = this.#pending.get(region);
    if (entry === undefined || this.#closed) return;
    entry.timer = setTimeout(() => {
      const attempt = this.#attempt(region).finally(() => this.#running.delete(attempt));
      this.#running.add(attempt);
    }, this.#options.intervalMs);
    entry.timer.unref();
  }

  async #attempt(region: string): Promise<void> {
    const { topology, pools, log, onReachable } = this.#options;
    const primary = topology.region(region)!.primary;
    const backend = `${primary.host}:${primary.port}`;
    try {
      const lease = await pools.acquire(region, primary.user ?? "postgres");
      lease.release();
    } catch {
      this.#schedule(region);
      return;
    }
    if (this.#closed) return;
    try {
      await onReachable(region);
    } catch (error) {
      log.warn(
        { region, backend, err: error },
        "region answers again, but its start-up work failed; retried",
      );
      this.#schedule(region);
      return;
    }
    const downSinceStartMs = Date.now() - (this.#pending.get(region)?.since ?? Date.now());
    this.#pending.delete(region);
    log.info({ region, backend, downSinceStartMs }, "region reachable again: picked up");
  }
}
