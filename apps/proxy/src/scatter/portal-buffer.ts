import type { RowSource } from "./row-source.js";

/**
 * The rest of a scatter answer after a row-limited Execute. The regions' connections are not kept
 * across the client's messages (a portal may live until the transaction ends, and every region's
 * connection would stay busy meanwhile): the remaining rows are read into the proxy at once and
 * the next Executes are served from here.
 */
export class PortalBuffer implements RowSource {
  private index = 0;

  private constructor(
    private readonly rows: Buffer[],
    /** A region's failure after the rows read: reported by the Execute that reaches it. */
    private readonly failure: unknown,
  ) {}

  /** Reads every remaining row of `source` and closes it. */
  static async drain(source: RowSource): Promise<PortalBuffer> {
    const rows: Buffer[] = [];
    let failure: unknown = null;
    try {
      for (let row = await source.next(); row !== null; row = await source.next()) rows.push(row);
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
