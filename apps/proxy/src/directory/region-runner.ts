import type { Topology } from "@geo/core";
import type { Lease } from "@geo/pool";
import type { RegionPools } from "../executor/region-pools.js";

/** One simple-protocol statement's rows, text columns by name. */
export interface SqlRows {
  readonly rows: Record<string, string | null>[];
  readonly tag: string;
}

/**
 * Runs the proxy's own statements on a region's primary, on a pooled connection of the endpoint's
 * role: never a client's connection, so nothing here joins a client's transaction.
 */
export class RegionRunner {
  constructor(
    private readonly topology: Topology,
    private readonly pools: RegionPools,
  ) {}

  async acquire(region: string): Promise<Lease> {
    const user = this.topology.region(region)?.primary.user ?? "postgres";
    return this.pools.acquire(region, user);
  }

  /** One statement (or a string of them) in autocommit, on a connection given back afterwards. */
  async run(region: string, sql: string): Promise<SqlRows> {
    const lease = await this.acquire(region);
    try {
      return await query(lease, sql);
    } finally {
      if (lease.connection.txStatus !== "I") lease.discard("left inside a transaction");
      else lease.release();
    }
  }

  /**
   * `run`, failing once `ms` have passed without an answer. The connection a late answer would
   * come back on is closed, not pooled: a frozen server cannot keep connections checked out one
   * per call, and the next call gets a fresh one.
   */
  async runWithin(region: string, sql: string, ms: number): Promise<SqlRows> {
    const deadline = performance.now() + ms;
    const late = (): Error => new Error(`no answer from region ${region} within ${ms} ms`);
    const acquiring = this.acquire(region);
    const lease = await within(acquiring, ms, late).catch((error: unknown) => {
      void acquiring.then(
        (arrived) => arrived.release(),
        () => undefined,
      );
      throw error;
    });
    let timedOut = false;
    try {
      return await within(query(lease, sql), Math.max(0, deadline - performance.now()), () => {
        timedOut = true;
        return late();
      });
    } finally {
      if (timedOut || lease.connection.txStatus !== "I")
        lease.discard("no answer in time, or left inside a transaction");
      else lease.release();
    }
  }
}

/** `promise`, or a rejection with `error()` once `ms` have passed without it settling (it may settle later). */
export function within<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs `sql` on a leased connection; rejects with the server's PgError. */
export async function query(lease: Lease, sql: string): Promise<SqlRows> {
  const result = await lease.connection.simpleQuery(sql);
  return {
    tag: result.tag,
    rows: result.rows.map((row) =>
      Object.fromEntries(result.fields.map((field, i) => [field, row[i] ?? null])),
    ),
  };
}
