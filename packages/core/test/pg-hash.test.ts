import { describe, expect, it } from "vitest";
import {
  hashInt8Extended,
  hashTextExtended,
  hashUint32Extended,
  toSignedInt64,
  unsignedModulo,
} from "../src/index.js";

// Values PostgreSQL 15 printed for these calls. The port is also checked against a live server,
// value by value, in pg-hash-postgres.test.ts; these keep it honest without one.
describe("PostgreSQL extended hash", () => {
  it("matches hashtextextended for known values", () => {
    expect(hashTextExtended("")).toBe(-6939563903564495251n);
    expect(hashTextExtended("alice")).toBe(-6283343261252860035n);
    expect(hashTextExtended("héllo wörld 日本語 ok")).toBe(-4356207255874890581n);
    expect(hashTextExtended("abc", 42n)).toBe(4423357919252764502n);
  });

  it("matches hashint8extended for known values, including the extremes", () => {
    expect(hashInt8Extended(0n)).toBe(4154612158245552303n);
    expect(hashInt8Extended(-1n)).toBe(-1888257769727981238n);
    expect(hashInt8Extended(-9223372036854775808n)).toBe(-9109110466470504941n);
    expect(hashInt8Extended(9223372036854775807n)).toBe(1977219185673256887n);
  });

  it("hashes an int8 that fits in 32 bits like hashint4extended of the same value", () => {
    for (const value of [0, 1, -1, 42, -42, 2147483647, -2147483648]) {
      expect(hashInt8Extended(BigInt(value))).toBe(toSignedInt64(hashUint32Extended(value >>> 0)));
    }
  });

  it("takes the unsigned 64-bit hash modulo the shard count without losing precision", () => {
    for (const text of ["", "alice", "bob", "chandra", "日本"]) {
      const hash = hashTextExtended(text);
      const unsigned = BigInt.asUintN(64, hash);
      const parts = { high: Number(unsigned >> 32n), low: Number(unsigned & 0xffffffffn) };
      for (const count of [1, 2, 3, 7, 1000]) {
        expect(unsignedModulo(parts, count)).toBe(Number(unsigned % BigInt(count)));
      }
    }
  });
});
