import type { RegionId } from "@geo/core";
import { PgError } from "@geo/proto";
import type { DirectoryStore } from "../directory/directory-store.js";
import type { RegionRunner } from "../directory/region-runner.js";
import { ident, qualified } from "../directory/sql-text.js";
import type { KeyMover, MovedTable } from "./move-keys.js";

/** What a rebalance did: the rows moved per table, and the move that stopped it, if one did. */
export interface RebalanceReport {
  readonly moved: readonly MovedTable[];
  readonly keysMoved: number;
  readonly batches: number;
  readonly refused: { readonly keys: readonly string[]; readonly error: PgError } | undefined;
}

/** Told after each batch: keys moved so far, of how many, and the batch's time. */
export type BatchProgress = (done: number, total: number, batch: number, batches: number, ms: number) => void;

/**
 * `REBALANCE <from> TO <to> LIMIT n BATCH m`: up to n of the keys whose rows are in `from`
 * (read from its rows, in key order), m keys per atomic move. Stops at the first refused move:
 * what moved before it stays moved, and the refusal is reported with the keys it was for.
 */
export async function rebalance(
  store: DirectoryStore,
  runner: RegionRunner,
  mover: KeyMover,
  request: { from: RegionId; to: RegionId; limit: number; batch: number },
  progress: BatchProgress,
): Promise<RebalanceReport | PgError> {
  const keys = await keysIn(store, runner, request.from, request.limit);
  const batches = Math.ceil(keys.length / request.batch);
  const totals = new Map<string, MovedTable>();
  let keysMoved = 0;
  for (let index = 0; index < batches; index++) {
    const batch = keys.slice(index * request.batch, (index + 1) * request.batch);
    const started = performance.now();
    const result = await mover.move(batch, request.to);
    if (result instanceof PgError) {
      return {
        moved: [...totals.values()],
        keysMoved,
        batches: index,
        refused: { keys: batch, error: result },
      };
    }
    for (const row of result) {
      const id = `${row.table}\u0000${row.from}`;
      const before = totals.get(id);
      totals.set(id, before === undefined ? row : { ...row, rows: before.rows + row.rows });
    }
    keysMoved += batch.length;
    progress(keysMoved, keys.length, index + 1, batches, performance.now() - started);
  }
  return { moved: [...totals.values()], keysMoved, batches, refused: undefined };
}

/** The first `limit` distinct keys with rows in `region`, across every geo-partitioned table. */
async function keysIn(
  store: DirectoryStore,
  runner: RegionRunner,
  region: RegionId,
  limit: number,
): Promise<string[]> {
  const union = store.geoTables
    .map((table) => `SELECT ${ident(table.key)}::text AS key FROM ${qualified(table.table)}`)
    .join(" UNION ");
  if (union === "") return [];
  const rows = await runner.run(
    region,
    `SELECT key FROM (${union}) AS keys WHERE key IS NOT NULL ORDER BY key LIMIT ${limit}`,
  );
  return rows.rows.map((row) => row["key"]!).filter((key) => key !== undefined);
}
