import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { trailingValues, withoutTrailing } from "../src/scatter/data-row.js";
import { compareFor, compareNumeric, compareRows, type MergeKey } from "../src/scatter/sort-keys.js";
import { ColumnArray } from "../src/scatter/typed-arrays.js";

/** numeric's binary wire form of a decimal string (what numeric_send writes). */
function numericBinary(text: string): Buffer {
  const special: Record<string, number> = { NaN: 0xc000, Infinity: 0xd000, "-Infinity": 0xf000 };
  if (special[text] !== undefined) {
    const out = Buffer.alloc(8);
    out.writeUInt16BE(special[text]!, 4);
    return out;
  }
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = text.replace("-", "").split(".");
  const intPart = whole.replace(/^0+/, "");
  const padInt = intPart.padStart(Math.ceil(intPart.length / 4) * 4, "0");
  const padFrac = fraction.padEnd(Math.ceil(fraction.length / 4) * 4, "0");
  let digits = [...(padInt.match(/.{4}/g) ?? []), ...(padFrac.match(/.{4}/g) ?? [])].map(Number);
  let weight = padInt.length / 4 - 1;
  while (digits.length > 0 && digits[0] === 0) {
    digits = digits.slice(1);
    weight--;
  }
  while (digits.length > 0 && digits[digits.length - 1] === 0) digits = digits.slice(0, -1);
  const out = Buffer.alloc(8 + 2 * digits.length);
  out.writeInt16BE(digits.length, 0);
  out.writeInt16BE(digits.length === 0 ? 0 : weight, 2);
  out.writeUInt16BE(negative && digits.length > 0 ? 0x4000 : 0, 4);
  out.writeUInt16BE(fraction.length, 6);
  for (const [i, d] of digits.entries()) out.writeInt16BE(d, 8 + 2 * i);
  return out;
}

/** The exact value of a decimal string scaled by 10^20, for reference comparisons. */
function scaled(text: string): bigint {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = text.replace("-", "").split(".");
  const value = BigInt(whole + fraction.padEnd(20, "0"));
  return negative ? -value : value;
}

const decimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 12 }))
  .map(([negative, digits, scale]) => {
    const text = digits.toString().padStart(scale + 1, "0");
    const body = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
    return negative ? `-${body}` : body;
  });

describe("sort keys compared in their binary form", () => {
  it("orders numerics as their exact values, whatever their scale", () => {
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        const expected = Math.sign(Number(scaled(a) - scaled(b)));
        expect(Math.sign(compareNumeric(numericBinary(a), numericBinary(b)))).toBe(expected);
      }),
      { numRuns: 500 },
    );
    // Equal negatives compare as 0, not as -0 (which Object.is and toBe tell apart).
    expect(compareNumeric(numericBinary("-0.19"), numericBinary("-0.190"))).toBe(0);
  });

  it("puts numeric -Infinity first, then finite values, Infinity, and NaN last", () => {
    const order = ["-Infinity", "-5.5", "0", "0.0001", "12", "Infinity", "NaN"].map(numericBinary);
    for (let i = 0; i + 1 < order.length; i++) expect(compareNumeric(order[i]!, order[i + 1]!)).toBe(-1);
    expect(compareNumeric(numericBinary("NaN"), numericBinary("NaN"))).toBe(0);
    expect(compareNumeric(numericBinary("1.50"), numericBinary("1.5"))).toBe(0);
  });

  it("sorts float NaN above Infinity and equal to itself, and -0 equal to 0", () => {
    const float8 = compareFor(701)!;
    const f = (n: number) => {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(n, 0);
      return b;
    };
    expect(float8(f(Number.NaN), f(Number.POSITIVE_INFINITY))).toBe(1);
    expect(float8(f(Number.NaN), f(Number.NaN))).toBe(0);
    expect(float8(f(-0), f(0))).toBe(0);
    expect(float8(f(Number.NEGATIVE_INFINITY), f(-1e308))).toBe(-1);
  });

  it("places NULLs as the key says and reverses only non-NULL values for DESC", () => {
    const int4 = compareFor(23)!;
    const v = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeInt32BE(n, 0);
      return b;
    };
    const descNullsFirst: MergeKey[] = [{ compare: int4, descending: true, nullsFirst: true }];
    expect(compareRows(descNullsFirst, [null], [v(5)])).toBe(-1);
    expect(compareRows(descNullsFirst, [v(7)], [v(5)])).toBe(-1);
    const ascNullsLast: MergeKey[] = [{ compare: int4, descending: false, nullsFirst: false }];
    expect(compareRows(ascNullsLast, [null], [v(5)])).toBe(1);
    expect(compareRows(ascNullsLast, [v(-7)], [v(5)])).toBe(-1);
  });
});

describe("rows and arrays on the wire", () => {
  function dataRow(values: (string | null)[]): Buffer {
    const parts: Buffer[] = [Buffer.from([values.length >> 8, values.length & 0xff])];
    for (const value of values) {
      const length = Buffer.alloc(4);
      length.writeInt32BE(value === null ? -1 : Buffer.byteLength(value), 0);
      parts.push(length);
      if (value !== null) parts.push(Buffer.from(value));
    }
    return Buffer.concat(parts);
  }

  it("cuts the hidden sort columns off a row and reads only them", () => {
    const row = dataRow(["a", null, "ccc", "k1", null]);
    expect(withoutTrailing(row, 2)).toEqual(dataRow(["a", null, "ccc"]));
    expect(trailingValues(row, 3).map((v) => v?.toString() ?? null)).toEqual(["k1", null]);
  });

  it("writes a binary array in array_recv's layout, NULLs included", () => {
    const array = new ColumnArray(23, 1);
    const four = Buffer.alloc(4);
    four.writeInt32BE(42, 0);
    array.push(four);
    array.push(null);
    const bytes = array.encode();
    expect([0, 4, 8, 12, 16].map((at) => bytes.readInt32BE(at))).toEqual([1, 1, 23, 2, 1]);
    expect(bytes.readInt32BE(20)).toBe(4);
    expect(bytes.readInt32BE(24)).toBe(42);
    expect(bytes.readInt32BE(28)).toBe(-1);
    expect(new ColumnArray(23, 1).encode().readInt32BE(0)).toBe(0);
  });

  it("quotes every element of a text array literal", () => {
    const array = new ColumnArray(25, 0);
    for (const value of ['a"b', "c\\d", "", "NULL"]) array.push(Buffer.from(value));
    array.push(null);
    expect(array.encode().toString()).toBe('{"a\\"b","c\\\\d","","NULL",NULL}');
  });
});
