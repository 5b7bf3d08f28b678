import type { LimitWindow } from "./limit-window.js";

/** The answer's rows in order, as DataRow payloads in the client's formats; null once done. */
export interface RowSource {
  next(): Promise<Buffer | null>;
  /**
   * Ends the scatter: regions still answering are drained (or cancelled after a failure) and
   * every connection goes back. Called exactly once.
   */
  close(failed: boolean): Promise<void>;
}

/** LIMIT/OFFSET applied once over a source whose rows are already in order. */
export function windowed(source: RowSource, window: LimitWindow): RowSource {
  if (window.offset === 0 && window.count === null) return source;
  let skipped = 0;
  let sent = 0;
  return {
    async next() {
      if (window.count !== null && sent >= window.count) return null;
      while (skipped < window.offset) {
        if ((await source.next()) === null) return null;
        skipped++;
      }
      const row = await source.next();
      if (row !== null) sent++;
      return row;
    },
    close: (failed) => source.close(failed),
  };
}
