import type { CopyFormatSpec } from "./copy-format.js";
import type { LineFormat } from "./line-reader.js";
import type { KeyField } from "./row-reader.js";

const LF = 0x0a;

/**
 * PostgreSQL's CSV format: a quoted field may hold delimiters, quotes (doubled, or after the
 * ESCAPE character) and line ends; a line ends at a line feed outside quotes. An unquoted field
 * equal to the NULL marker is NULL, and so is a quoted one in a FORCE_NULL column.
 */
export class CsvLines implements LineFormat {
  private inQuote = false;
  private lastWasEscape = false;

  constructor(
    private readonly spec: CopyFormatSpec,
    /** The key column's name, for FORCE_NULL. */
    private readonly keyColumn: string | null,
  ) {}

  reset(): void {
    this.inQuote = false;
    this.lastWasEscape = false;
  }

  scan(bytes: Buffer, from: number): number {
    const { quote, escape: esc } = this.spec;
    let inQuote = this.inQuote;
    let lastWasEscape = this.lastWasEscape;
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (c === LF && !inQuote) {
        this.reset();
        return i + 1;
      }
      if (quote === esc) {
        // A doubled quote inside quotes toggles twice: still inside.
        if (c === quote) inQuote = !inQuote;
        continue;
      }
      // An escape counts only inside quotes, and not as the second of an escape-escape pair.
      if (inQuote && c === esc) lastWasEscape = !lastWasEscape;
      else if (c === quote && !lastWasEscape) inQuote = !inQuote;
      if (c !== esc) lastWasEscape = false;
    }
    this.inQuote = inQuote;
    this.lastWasEscape = lastWasEscape;
    return -1;
  }

  key(bytes: Buffer, start: number, end: number, key: KeyField): string | null | { readonly fault: string } {
    const { delimiter, quote, escape: esc, nullMarker } = this.spec;
    let field = 0;
    let i = start;
    for (;;) {
      const wanted = field === key.index;
      const value: number[] | null = wanted ? [] : null;
      let sawQuote = false;
      const fieldStart = i;
      while (i < end && bytes[i] !== delimiter) {
        const c = bytes[i]!;
        if (c !== quote) {
          value?.push(c);
          i++;
          continue;
        }
        sawQuote = true;
        i++;
        for (;;) {
          if (i >= end) return { fault: "unterminated CSV quoted field" };
          const q = bytes[i]!;
          if (q === esc && i + 1 < end && (bytes[i + 1] === esc || bytes[i + 1] === quote)) {
            value?.push(bytes[i + 1]!);
            i += 2;
            continue;
          }
          i++;
          if (q === quote) break;
          value?.push(q);
        }
      }
      if (value !== null) {
        const raw = bytes.subarray(fieldStart, i);
        const column = this.keyColumn;
        if (!sawQuote && raw.equals(nullMarker) && (column === null || !this.spec.forceNotNull(column))) {
          return null;
        }
        const text = Buffer.from(value);
        if (
          sawQuote &&
          this.keyColumn !== null &&
          this.spec.forceNull(this.keyColumn) &&
          text.equals(nullMarker)
        ) {
          return null;
        }
        return text.toString("utf8");
      }
      if (i >= end) return { fault: `missing data for column "${key.name}"` };
      i++;
      field++;
    }
  }
}
