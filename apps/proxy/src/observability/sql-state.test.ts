import { describe, expect, it } from "vitest";
import { endsSession, sqlStateOf } from "./sql-state.js";

/** An ErrorResponse payload written field by field, independently of the proxy's encoder. */
function payload(fields: Record<string, string>): Buffer {
  const parts = Object.entries(fields).map(([type, value]) => Buffer.from(`${type}${value}\0`, "utf8"));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

describe("sqlStateOf", () => {
  it("reads the C field wherever it stands among the others", () => {
    expect(sqlStateOf(payload({ S: "ERROR", V: "ERROR", C: "42P01", M: "relation does not exist" }))).toBe(
      "42P01",
    );
    expect(sqlStateOf(payload({ C: "0A000" }))).toBe("0A000");
    expect(sqlStateOf(payload({ S: "FATAL", M: "C in a message is not the code", C: "57P01" }))).toBe(
      "57P01",
    );
  });

  it("reads a payload without a code, or cut short, as XX000", () => {
    expect(sqlStateOf(payload({ S: "ERROR", M: "no code" }))).toBe("XX000");
    expect(sqlStateOf(Buffer.from("SERROR\0C42P0", "utf8"))).toBe("XX000");
    expect(sqlStateOf(Buffer.alloc(0))).toBe("XX000");
  });
});

describe("endsSession", () => {
  it("reads the untranslated V severity: FATAL and PANIC end the session, ERROR does not", () => {
    expect(endsSession(payload({ S: "FATAL", V: "FATAL", C: "57P01" }))).toBe(true);
    expect(endsSession(payload({ S: "PANIK", V: "PANIC", C: "XX000" }))).toBe(true);
    expect(endsSession(payload({ S: "FATAL", V: "ERROR", C: "42P01" }))).toBe(false);
    expect(endsSession(payload({ S: "ERROR", C: "42P01", M: "VFATAL" }))).toBe(false);
  });

  it("reads a payload without a severity, or cut short, as not ending the session", () => {
    expect(endsSession(Buffer.alloc(0))).toBe(false);
    expect(endsSession(Buffer.from("VFAT", "utf8"))).toBe(false);
  });
});
