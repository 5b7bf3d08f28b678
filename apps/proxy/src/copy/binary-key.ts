import type { BinaryKeyDecoder } from "./binary-rows.js";

/** Type OIDs of the key types binary COPY data can be routed by. */
const INT2 = 21;
const INT4 = 23;
const INT8 = 20;
const TEXT = 25;
const VARCHAR = 1043;
const NAME = 19;
const UUID = 2950;

/** The names of the types `binaryKeyDecoder` reads, for the hint of a refusal. */
export const BINARY_KEY_TYPES = ["int2", "int4", "int8", "text", "varchar", "uuid"] as const;

/**
 * The decoder of a key field sent in binary for a column of type `oid`, or null for a type the
 * proxy does not read: integers as decimal text, text as UTF-8, uuid in its canonical spelling
 * (the text PostgreSQL prints, so the key is the one an INSERT of the same value routes by).
 */
export function binaryKeyDecoder(oid: number): BinaryKeyDecoder | null {
  switch (oid) {
    case INT2:
      return (bytes, start, end) => (end - start === 2 ? String(bytes.readInt16BE(start)) : null);
    case INT4:
      return (bytes, start, end) => (end - start === 4 ? String(bytes.readInt32BE(start)) : null);
    case INT8:
      return (bytes, start, end) => (end - start === 8 ? bytes.readBigInt64BE(start).toString() : null);
    case TEXT:
    case VARCHAR:
    case NAME:
      return (bytes, start, end) => bytes.toString("utf8", start, end);
    case UUID:
      return (bytes, start, end) => {
        if (end - start !== 16) return null;
        const hex = bytes.toString("hex", start, end);
        return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      };
    default:
      return null;
  }
}
