/**
 * A row of a COPY data stream that cannot be routed: the line PostgreSQL would name in its
 * CONTEXT (the header counts as line 1) and why. `format`: the row cannot be read (22P04);
 * `null-key`: its key is NULL (23502).
 */
export interface RowFault {
  readonly line: number;
  readonly reason: "format" | "null-key";
  readonly message: string;
}

/** Where a reader's rows go. */
export interface RowHandler {
  /** Bytes every region gets ahead of the rows: the header line, the binary file header. */
  prefix(bytes: Buffer): void;
  /**
   * One row as the client sent it, with its line end (a view, valid only during the call), and
   * the text of its key field: null for NULL, undefined when no key is read.
   */
  row(bytes: Buffer, key: string | null | undefined, line: number): void;
}

/**
 * Cuts a COPY data stream into rows, whatever the CopyData messages' boundaries: a row may begin
 * in one message and end in a later one. Reads the key field of each row (the reader is built
 * with its position) and hands both to the handler.
 */
export interface RowReader {
  /** One CopyData message's data (a view, not kept). Returns the first fault, after which nothing more is read. */
  push(chunk: Buffer): RowFault | null;
  /** CopyDone: an unterminated last row is a row; an unfinished binary tuple is a fault. */
  end(): RowFault | null;
  /** The end-of-data marker was read (`\.`, or the binary trailer): what follows is ignored. */
  readonly finished: boolean;
  /** Rows read so far (the header excluded). */
  readonly rows: number;
}

/** Where a reader finds the key, and how it names it in errors. */
export interface KeyField {
  readonly index: number;
  readonly name: string;
}

export function missingKey(line: number, key: KeyField): RowFault {
  return { line, reason: "format", message: `missing data for column "${key.name}"` };
}

export function nullKey(line: number, key: KeyField): RowFault {
  return { line, reason: "null-key", message: `null value in column "${key.name}" cannot be routed` };
}

/** A row longer than the limit: refused rather than held whole in memory. */
export function rowTooLong(line: number, limit: number): RowFault {
  return { line, reason: "format", message: `row is longer than ${limit} bytes` };
}
