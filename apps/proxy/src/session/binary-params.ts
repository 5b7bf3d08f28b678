/**
 * Bound parameters sent in binary, decoded to the text the planner routes by, for the types a
 * partition key can have. Anything else returns undefined: the caller refuses to guess.
 */
export const BINARY_KEY_TYPES = {
  int2: 21,
  int4: 23,
  int8: 20,
  text: 25,
  varchar: 1043,
  bpchar: 1042,
  name: 19,
  uuid: 2950,
} as const;

export function decodeBinaryParam(typeOid: number, value: Buffer): string | undefined {
  switch (typeOid) {
    case BINARY_KEY_TYPES.int2:
      return value.length === 2 ? String(value.readInt16BE(0)) : undefined;
    case BINARY_KEY_TYPES.int4:
      return value.length === 4 ? String(value.readInt32BE(0)) : undefined;
    case BINARY_KEY_TYPES.int8:
      return value.length === 8 ? value.readBigInt64BE(0).toString() : undefined;
    case BINARY_KEY_TYPES.text:
    case BINARY_KEY_TYPES.varchar:
    case BINARY_KEY_TYPES.name:
      return value.toString("utf8");
    case BINARY_KEY_TYPES.bpchar:
      // char(n) compares without its trailing blanks.
      return value.toString("utf8").replace(/ +$/, "");
    case BINARY_KEY_TYPES.uuid: {
      if (value.length !== 16) return undefined;
      const hex = value.toString("hex");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    default:
      return undefined;
  }
}
