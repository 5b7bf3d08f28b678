import type { FormatCode } from "@geo/proto";
// The built-in scalar types that travel in binary: the list @geo/sql's home relation reads.
import { BINARY_SCALAR_NAMES } from "@geo/sql";

/**
 * One shipped column: the regions' values of one column gathered into one array parameter of the
 * home statement. Built-in scalar types travel in binary (exact whatever the session's DateStyle
 * or extra_float_digits); array-typed columns (bound as text[]) and types created by users (whose
 * OIDs differ from server to server) travel as a text array literal.
 * Which is which: `shippingFormat`.
 */
export class ColumnArray {
  private readonly values: (Buffer | null)[] = [];
  private bytes = 0;

  constructor(
    /** The element's type OID (for binary arrays; must be the home server's OID too). */
    readonly elementOid: number,
    readonly format: FormatCode,
  ) {}

  push(value: Buffer | null): number {
    this.values.push(value);
    const size = value === null ? 4 : 4 + value.length;
    this.bytes += size;
    return size;
  }

  get length(): number {
    return this.values.length;
  }

  /** The parameter value, in `format`. */
  encode(): Buffer {
    return this.format === 1 ? this.binary() : Buffer.from(this.text(), "utf8");
  }

  /** PostgreSQL's array_recv layout: one dimension, lower bound 1; no dimension when empty. */
  private binary(): Buffer {
    const count = this.values.length;
    if (count === 0) {
      const empty = Buffer.alloc(12);
      empty.writeInt32BE(this.elementOid, 8);
      return empty;
    }
    const out = Buffer.allocUnsafe(20 + this.bytes);
    out.writeInt32BE(1, 0);
    out.writeInt32BE(this.values.includes(null) ? 1 : 0, 4);
    out.writeInt32BE(this.elementOid, 8);
    out.writeInt32BE(count, 12);
    out.writeInt32BE(1, 16);
    let at = 20;
    for (const value of this.values) {
      if (value === null) {
        out.writeInt32BE(-1, at);
        at += 4;
        continue;
      }
      out.writeInt32BE(value.length, at);
      value.copy(out, at + 4);
      at += 4 + value.length;
    }
    return out;
  }

  /** `{"a","b",NULL}`: every element quoted, so no type's text needs to know the array syntax. */
  private text(): string {
    const parts = this.values.map((value) =>
      value === null ? "NULL" : `"${value.toString("utf8").replace(/[\\"]/g, (c) => `\\${c}`)}"`,
    );
    return `{${parts.join(",")}}`;
  }
}

/** OIDs below this are PostgreSQL's own and the same on every server. */
export const FIRST_USER_OID = 16384;

/**
 * How a column of this type is shipped: binary for the built-in scalars named above (their OIDs
 * are the same on every server), text for everything else (arrays, composites, enums, domains,
 * ranges, "char", types created by users), cast back to `typeName` at home.
 */
export function shippingFormat(typeOid: number, typeName: string): FormatCode {
  if (typeOid >= FIRST_USER_OID) return 0;
  const bare = typeName.replace(/\(\d+(?:,\s*\d+)?\)/g, "").trim();
  const base = bare.startsWith("interval") && !bare.includes("[") ? "interval" : bare;
  return BINARY_SCALAR_NAMES.has(base) ? 1 : 0;
}
