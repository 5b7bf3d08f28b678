import { trailingValues, withoutTrailing } from "./data-row.js";
import type { RegionRows } from "./region-statement.js";
import type { MergeKey } from "./sort-keys.js";
import { compareRows } from "./sort-keys.js";

/** The head of one region's sorted stream: its row and the row's decoded-only-as-needed keys. */
interface Head {
  readonly rows: RegionRows;
  row: Buffer;
  keys: (Buffer | null)[];
}

/**
 * The in-order k-way merge of the regions' sorted streams. Each region sorted its own rows by the
 * same keys, carried as hidden trailing columns in binary; only those are read, the rest of the
 * row passes through untouched (hidden columns cut off). Only each region's head row is held here;
 * the channel below holds at most one batch more.
 */
export class OrderedMerge {
  private heads: Head[] | null = null;

  constructor(
    private readonly streams: readonly RegionRows[],
    private readonly keys: readonly MergeKey[],
    private readonly hidden: number,
  ) {}

  private async advance(rows: RegionRows): Promise<Head | null> {
    const row = await rows.next();
    if (row === null) return null;
    const total = row.readInt16BE(0);
    return { rows, row, keys: trailingValues(row, total - this.hidden) };
  }

  async next(): Promise<Buffer | null> {
    if (this.heads === null) {
      const first = await Promise.all(this.streams.map((rows) => this.advance(rows)));
      this.heads = first.filter((head): head is Head => head !== null);
    }
    const heads = this.heads;
    if (heads.length === 0) return null;
    let best = 0;
    for (let i = 1; i < heads.length; i++) {
      if (compareRows(this.keys, heads[i]!.keys, heads[best]!.keys) < 0) best = i;
    }
    const head = heads[best]!;
    const out = withoutTrailing(head.row, this.hidden);
    const following = await this.advance(head.rows);
    if (following === null) heads.splice(best, 1);
    else heads[best] = following;
    return out;
  }
}

/**
 * Concatenation: rows as they come. A region whose rows are already read goes first; when none
 * has any, the first region still answering is waited for (the others keep one batch each).
 */
export class Concatenation {
  private readonly active: RegionRows[];

  constructor(streams: readonly RegionRows[]) {
    this.active = [...streams];
  }

  async next(): Promise<Buffer | null> {
    while (this.active.length > 0) {
      const index = Math.max(
        0,
        this.active.findIndex((rows) => rows.ready),
      );
      const row = await this.active[index]!.next();
      if (row !== null) return row;
      this.active.splice(index, 1);
    }
    return null;
  }
}
