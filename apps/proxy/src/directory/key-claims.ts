import type { MutableDirectory, RegionId } from "@geo/core";
import type { PgError } from "@geo/proto";
import type { KnownEntries } from "./known-entries.js";
import type { PaxosClaims } from "./paxos-claims.js";
import type { Quorum } from "./quorum.js";
import { authorityUnreachable } from "./shared-errors.js";
import type { SharedTables } from "./shared-tables.js";

/**
 * New keys claimed per statement (a COPY may bring many). A Paxos round is two statements in each
 * region, each bounded by lease_ms, and two proxies claiming the same keys wait on each other's
 * rows: its batches are smaller, so a round stays well inside the bound.
 */
const CLAIM_BATCH = 1000;
const PAXOS_BATCH = 250;

export interface KeyClaimsOptions {
  readonly quorum: Quorum;
  readonly tables: SharedTables;
  /** With a majority authority: claims by Paxos. Without, an insert and a read in the authority. */
  readonly paxos: PaxosClaims | undefined;
  readonly directory: MutableDirectory;
  readonly known: KnownEntries;
}

/**
 * First writes' claims of their keys where the proxies agree: in the authority region, an insert
 * that keeps the first placement and a read of the winner; with a majority, a Paxos round. A
 * claimed key is pointed at its region in this proxy's directory at once.
 */
export class KeyClaims {
  constructor(private readonly options: KeyClaimsOptions) {}

  /**
   * Claims `keys` for `region`, a batch per statement. Resolves with where each key is now:
   * `region` for those this proxy claimed, another region for a key another proxy placed first.
   * With `allOrNothing` (a COPY, which fails whole when one key went elsewhere) it stops after
   * the first batch with such a key: two COPYs of the same keys then do not each win a batch of
   * them and both fail.
   */
  async claim(
    keys: readonly string[],
    region: RegionId,
    allOrNothing: boolean,
  ): Promise<Map<string, RegionId> | PgError> {
    const { quorum, directory, known } = this.options;
    try {
      const where = new Map<string, RegionId>();
      const size = this.options.paxos === undefined ? CLAIM_BATCH : PAXOS_BATCH;
      for (let i = 0; i < keys.length; i += size) {
        const batch = keys.slice(i, i + size);
        const placed = await this.#claimBatch(batch, region);
        for (const key of batch) {
          const placedIn = placed.get(key);
          if (placedIn === undefined)
            return authorityUnreachable(
              quorum.where,
              "the claim of a new key was not found after it was written",
            );
          where.set(key, placedIn);
          directory.assign(key, placedIn);
        }
        known.assigned(batch);
        if (allOrNothing && batch.some((key) => placed.get(key) !== region)) break;
      }
      return where;
    } catch (error) {
      return authorityUnreachable(quorum.where, error instanceof Error ? error.message : String(error));
    }
  }

  async #claimBatch(keys: readonly string[], region: RegionId): Promise<Map<string, RegionId>> {
    const { paxos, quorum, tables } = this.options;
    if (paxos !== undefined) return paxos.claim(keys, region);
    await quorum.one(tables.claimSql(keys, region));
    const placed = await quorum.one(tables.placedSql(keys));
    const where = new Map<string, RegionId>();
    for (const row of placed.rows)
      if (row["key"] != null && row["region"] != null) where.set(row["key"], row["region"]);
    return where;
  }
}
