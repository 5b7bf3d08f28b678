import type { CopyFormat, CopyOptions } from "@geo/sql";

/**
 * How the bytes of a COPY data stream are read: the statement's options with PostgreSQL's
 * defaults applied (text: tab and `\N`; CSV: comma, empty string, `"` quoting and escaping).
 * Options PostgreSQL would reject (a delimiter of two characters, say) are left for the servers,
 * which run the statement and answer with their own error before any data is read.
 */
export interface CopyFormatSpec {
  readonly format: CopyFormat;
  readonly delimiter: number;
  /** The NULL marker as written in the data (compared with a field's raw bytes). */
  readonly nullMarker: Buffer;
  readonly quote: number;
  readonly escape: number;
  /** The first line is a header: sent to every region (each skips or matches it), never routed. */
  readonly header: boolean;
  /** CSV: a quoted field equal to the NULL marker is NULL in this column (FORCE_NULL). */
  readonly forceNull: (column: string) => boolean;
  /** CSV: an unquoted field equal to the NULL marker is that text in this column (FORCE_NOT_NULL). */
  readonly forceNotNull: (column: string) => boolean;
}

export function copyFormatSpec(options: CopyOptions): CopyFormatSpec {
  const csv = options.format === "csv";
  const quote = byteOf(options.quote, 0x22);
  return {
    format: options.format,
    delimiter: byteOf(options.delimiter, csv ? 0x2c : 0x09),
    nullMarker: Buffer.from(options.null ?? (csv ? "" : "\\N"), "utf8"),
    quote,
    escape: byteOf(options.escape, quote),
    header: options.header !== undefined && options.header !== false,
    forceNull: columnTest(options.forceNull),
    forceNotNull: columnTest(options.forceNotNull),
  };
}

function columnTest(columns: readonly string[] | "*" | undefined): (column: string) => boolean {
  if (columns === undefined) return () => false;
  if (columns === "*") return () => true;
  return (column) => columns.includes(column);
}

function byteOf(value: string | undefined, fallback: number): number {
  if (value === undefined || value.length === 0) return fallback;
  return value.charCodeAt(0);
}
