import type { SortKey } from "@geo/sql";

/** Compares two non-NULL values of one type in their binary wire form, as PostgreSQL orders them. */
export type ValueCompare = (a: Buffer, b: Buffer) => number;

const NUMERIC_NEG = 0x4000;
const NUMERIC_NAN = 0xc000;
const NUMERIC_PINF = 0xd000;
const NUMERIC_NINF = 0xf000;

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/** Floats: NaN equals NaN and sorts above every number (infinity included); -0 equals 0. */
function compareFloat(a: number, b: number): number {
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** numeric's binary form: ndigits, weight, sign, dscale, then base-10000 digits. */
function numericRank(value: Buffer): number {
  const signWord = value.readUInt16BE(4);
  switch (signWord) {
    case NUMERIC_NINF:
      return 0;
    case NUMERIC_PINF:
      return 4;
    case NUMERIC_NAN:
      return 5;
    default: {
      if (!hasNonZeroDigit(value)) return 2;
      return signWord === NUMERIC_NEG ? 1 : 3;
    }
  }
}

function hasNonZeroDigit(value: Buffer): boolean {
  const ndigits = value.readInt16BE(0);
  for (let i = 0; i < ndigits; i++) if (value.readInt16BE(8 + 2 * i) !== 0) return true;
  return false;
}

/** Magnitudes of two non-zero finite numerics, digit by digit (leading zero digits skipped). */
function compareMagnitude(a: Buffer, b: Buffer): number {
  const da = digitsOf(a);
  const db = digitsOf(b);
  if (da.weight !== db.weight) return da.weight > db.weight ? 1 : -1;
  const length = Math.max(da.digits.length, db.digits.length);
  for (let i = 0; i < length; i++) {
    const x = da.digits[i] ?? 0;
    const y = db.digits[i] ?? 0;
    if (x !== y) return x > y ? 1 : -1;
  }
  return 0;
}

function digitsOf(value: Buffer): { weight: number; digits: number[] } {
  const ndigits = value.readInt16BE(0);
  let weight = value.readInt16BE(2);
  const digits: number[] = [];
  let leading = true;
  for (let i = 0; i < ndigits; i++) {
    const digit = value.readInt16BE(8 + 2 * i);
    if (leading && digit === 0) {
      weight--;
      continue;
    }
    leading = false;
    digits.push(digit);
  }
  return { weight, digits };
}

export function compareNumeric(a: Buffer, b: Buffer): number {
  const ra = numericRank(a);
  const rb = numericRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (ra === 1) return compareMagnitude(b, a);
  if (ra === 3) return compareMagnitude(a, b);
  return 0;
}

/** The comparison for a type OID the proxy merges itself (`EXACT_SORT_TYPE_OIDS`), or null. */
export function compareFor(typeOid: number): ValueCompare | null {
  switch (typeOid) {
    case 21:
      return (a, b) => sign(a.readInt16BE(0) - b.readInt16BE(0));
    case 23:
      return (a, b) => sign(a.readInt32BE(0) - b.readInt32BE(0));
    case 20:
      return (a, b) => {
        const x = a.readBigInt64BE(0);
        const y = b.readBigInt64BE(0);
        return x < y ? -1 : x > y ? 1 : 0;
      };
    case 26:
      return (a, b) => sign(a.readUInt32BE(0) - b.readUInt32BE(0));
    case 700:
      return (a, b) => compareFloat(a.readFloatBE(0), b.readFloatBE(0));
    case 701:
      return (a, b) => compareFloat(a.readDoubleBE(0), b.readDoubleBE(0));
    case 16:
      return (a, b) => sign((a[0] ?? 0) - (b[0] ?? 0));
    case 2950:
      return (a, b) => Buffer.compare(a, b);
    case 1700:
      return compareNumeric;
    default:
      return null;
  }
}

/** One ORDER BY key as the merge applies it: the column, its comparison, direction and NULLS placement. */
export interface MergeKey {
  readonly compare: ValueCompare;
  readonly descending: boolean;
  readonly nullsFirst: boolean;
}

export function mergeKeys(keys: readonly SortKey[], hiddenOids: readonly number[]): MergeKey[] | null {
  const out: MergeKey[] = [];
  for (const [i, key] of keys.entries()) {
    if (key.collation !== undefined) return null;
    const compare = compareFor(hiddenOids[i] ?? 0);
    if (compare === null) return null;
    out.push({ compare, descending: key.descending, nullsFirst: key.nullsFirst });
  }
  return out;
}

/** Orders two rows' key tuples (values in key order, null for SQL NULL). */
export function compareRows(
  keys: readonly MergeKey[],
  a: readonly (Buffer | null)[],
  b: readonly (Buffer | null)[],
): number {
  for (const [i, key] of keys.entries()) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    let c: number;
    if (x === null || y === null) {
      if (x === y) continue;
      c = x === null ? (key.nullsFirst ? -1 : 1) : key.nullsFirst ? 1 : -1;
      return c;
    }
    c = key.compare(x, y);
    if (c !== 0) return key.descending ? -c : c;
  }
  return 0;
}
