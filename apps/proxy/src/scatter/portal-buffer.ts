import type { GatherConfig } from "@geo/core";
import { gatherBoundExceeded } from "./errors.js";
import type { RowSource } from "./row-source.js";

/**
 * The rest of a scatter answer after a row-limited Execute. The regions' connections are not kept
 * across the client's messages (a portal may live until the transaction ends, and every region's
 * connection would stay busy meanwhile): the remaining rows are read into the proxy at once, within
 * the [gather] bounds, and the next Executes are served from here.
 */
export class PortalBuffer implements RowSource {
  private index = 0;

  private constructor(
    private readonly rows: Buffer[],
    /** A region's failure after the rows read: reported by the Execute that reaches it. */
    private readonly failure: unknown,
  ) {}

  /**
   * Reads every remaining row of `source` and closes it. Past `limits` (the [gather] bounds) it
   * stops: the Execute that reaches that point gets the bound's error instead of more rows.
   */
  static async drain(
    source: RowSource,
    limits: GatherConfig,
    regions: readonly string[],
  ): Promise<PortalBuffer> {
    const rows: Buffer[] = [];
    let bytes = 0;
    let failure: unknown = null;
    try {
      for (let row = await source.next(); row !== null; row = await source.next()) {
        if (rows.length >= limits.maxRows)
          throw gatherBoundExceeded("rows", limits.maxRows, regions, "suspended");
        bytes += row.length;
        if (bytes > limits.maxBytes)
          throw gatherBoundExceeded("bytes", limits.maxBytes, regions, "suspended");
        rows.push(row);
      }
    } catch (error) {
      failure = error;
    }
    await source.close(failure !== null);
    return new PortalBuffer(rows, failure);
  }

  next(): Promise<Buffer | null> {
    const row = this.rows[this.index];
    if (row === undefined)
      return this.failure === null ? Promise.resolve(null) : Promise.reject(this.failure);
    this.rows[this.index] = undefined as unknown as Buffer;
    this.index++;
    return Promise.resolve(row);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
