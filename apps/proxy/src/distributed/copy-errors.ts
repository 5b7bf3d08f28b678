import { PgError, SqlState } from "@geo/proto";

/** One region's count of rows for a write run on every copy of a replicated table. */
export interface CopyCount {
  readonly region: string;
  readonly rows: number;
}

/**
 * A write run on every copy of a replicated table affected a different number of rows in some
 * regions: the copies no longer hold the same rows, and no answer would be one server's. The
 * write is rolled back everywhere (the block fails when inside one).
 */
export function copiesDiverged(tables: readonly string[], counts: readonly CopyCount[]): PgError {
  const list = counts.map((count) => `${count.region}: ${count.rows}`).join(", ");
  const subject = tables.length === 0 ? "the replicated table" : `replicated table ${tables.join(", ")}`;
  return new PgError({
    code: SqlState.data_corrupted,
    message: `the copies of ${subject} differ between regions: the write affected a different number of rows in each (${list}); it was rolled back`,
    hint: "Compare the table's rows in those regions and repair the copies that differ, then run the write again.",
  });
}
