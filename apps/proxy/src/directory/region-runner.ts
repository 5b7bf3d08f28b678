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
