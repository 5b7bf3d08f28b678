import type { CopyFormatSpec } from "./copy-format.js";

const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

/** Control characters COPY's text format writes as a backslash and a letter. */
const TEXT_ESCAPES = new Map<number, number>([
  [0x08, 0x62], // \b
  [0x0c, 0x66], // \f
  [LF, 0x6e], // \n
  [CR, 0x72], // \r
  [0x09, 0x74], // \t
  [0x0b, 0x76], // \v
]);

/**
 * One row of COPY ... TO output in the text or CSV format, from the columns' text values (as
 * a server's DataRow holds them: each type's output function's text, which is what COPY writes
 * too), escaped or quoted as PostgreSQL's COPY writes them, with the line feed that ends it.
 */
export function copyOutLine(
  values: readonly (Buffer | null)[],
  spec: CopyFormatSpec,
  forceQuote: (column: number) => boolean,
): Buffer {
  const parts: Buffer[] = [];
  const delimiter = Buffer.from([spec.delimiter]);
  for (const [i, value] of values.entries()) {
    if (i > 0) parts.push(delimiter);
    if (value === null) parts.push(spec.nullMarker);
    else if (spec.format === "csv") parts.push(csvField(value, spec, forceQuote(i), values.length === 1));
    else parts.push(textField(value, spec.delimiter));
  }
  parts.push(Buffer.from([LF]));
  return Buffer.concat(parts);
}

/** A text-format value: control characters, backslashes and the delimiter escaped. */
export function textField(value: Buffer, delimiter: number): Buffer {
  let needs = false;
  for (const c of value) {
    if (c < 0x20 || c === BACKSLASH || c === delimiter) {
      needs = true;
      break;
    }
  }
  if (!needs) return value;
  const out: number[] = [];
  for (const c of value) {
    const letter = c < 0x20 ? TEXT_ESCAPES.get(c) : undefined;
    if (letter !== undefined) out.push(BACKSLASH, letter);
    else if (c === BACKSLASH || c === delimiter) out.push(BACKSLASH, c);
    else out.push(c);
  }
  return Buffer.from(out);
}

/**
 * A CSV value: quoted when forced, when it equals the NULL marker (so it reads back as a value),
 * when it holds the delimiter, the quote or a line end, or when it is `\.` alone on its line;
 * inside quotes the quote and escape characters are preceded by the escape character.
 */
export function csvField(value: Buffer, spec: CopyFormatSpec, forced: boolean, alone: boolean): Buffer {
  const { delimiter, quote, escape: esc } = spec;
  let quoted = forced || value.equals(spec.nullMarker);
  if (!quoted && alone && value.length === 2 && value[0] === BACKSLASH && value[1] === 0x2e) quoted = true;
  if (!quoted) {
    for (const c of value) {
      if (c === delimiter || c === quote || c === LF || c === CR) {
        quoted = true;
        break;
      }
    }
  }
  if (!quoted) return value;
  const out: number[] = [quote];
  for (const c of value) {
    if (c === quote || c === esc) out.push(esc);
    out.push(c);
  }
  out.push(quote);
  return Buffer.from(out);
}
