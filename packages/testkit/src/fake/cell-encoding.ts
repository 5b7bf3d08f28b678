import { type FakeValue, valueText } from "./script.js";

/** pg_type OIDs the fake can send in binary format. */
const TypeOid = {
  bool: 16,
  bytea: 17,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  float4: 700,
  float8: 701,
  bpchar: 1042,
  varchar: 1043,
} as const;

/** Encodes one cell in text (format 0) or binary (format 1); Buffers are sent unchanged in both. */
export function encodeCell(value: FakeValue, typeOid: number, format: 0 | 1): Buffer | null {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return value;
  if (format === 0) return Buffer.from(valueText(value), "utf8");
  return encodeBinary(value, typeOid);
}

function encodeBinary(value: Exclude<FakeValue, Buffer | null>, typeOid: number): Buffer {
  const text = valueText(value);
  switch (typeOid) {
    case TypeOid.bool:
      return Buffer.from([value === true || text === "t" || text === "true" ? 1 : 0]);
    case TypeOid.int2: {
      const out = Buffer.alloc(2);
      out.writeInt16BE(Number(text));
      return out;
    }
    case TypeOid.int4: {
      const out = Buffer.alloc(4);
      out.writeInt32BE(Number(text));
      return out;
    }
    case TypeOid.oid: {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(Number(text));
      return out;
    }
    case TypeOid.int8: {
      const out = Buffer.alloc(8);
      out.writeBigInt64BE(BigInt(text));
      return out;
    }
    case TypeOid.float4: {
      const out = Buffer.alloc(4);
      out.writeFloatBE(Number(text));
      return out;
    }
    case TypeOid.float8: {
      const out = Buffer.alloc(8);
      out.writeDoubleBE(Number(text));
      return out;
    }
    case TypeOid.text:
    case TypeOid.varchar:
    case TypeOid.bpchar:
    case TypeOid.name:
    case TypeOid.bytea:
      return Buffer.from(text, "utf8");
    default:
      throw new Error(
        `the fake backend cannot send type ${typeOid} in binary format; give the cell as a Buffer`,
      );
  }
}

/** typlen for RowDescription: fixed-width types report their size, the rest -1. */
export function typeSize(typeOid: number): number {
  switch (typeOid) {
    case TypeOid.bool:
      return 1;
    case TypeOid.int2:
      return 2;
    case TypeOid.int4:
    case TypeOid.oid:
    case TypeOid.float4:
      return 4;
    case TypeOid.int8:
    case TypeOid.float8:
      return 8;
    case TypeOid.name:
      return 64;
    default:
      return -1;
  }
}
