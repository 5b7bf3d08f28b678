import { describe, expect, it } from "vitest";
import * as p from "../src/index.js";
import { bodyOf, cstr, i8, i16, i32, msg, raw, untyped } from "./support/bytes.js";

function reason(value: unknown): string | undefined {
  return p.isProtocolFault(value) ? value.reason : undefined;
}

describe("decoders refuse what the protocol forbids", () => {
  it("a string without its terminator", () => {
    expect(reason(p.decodeQuery(Buffer.from("SELECT 1")))).toBe("unterminated-string");
    expect(reason(p.decodeParameterStatus(bodyOf(msg("S", cstr("a"), raw("b")))))).toBe(
      "unterminated-string",
    );
    expect(
      reason(p.decodeStartupPacket(bodyOf(untyped(i32(0), i32(196608), cstr("user"), raw("x"))))),
    ).toBeDefined();
  });

  it("a StartupMessage without the final empty name", () => {
    expect(reason(p.decodeStartupPacket(untyped(i32(196608), cstr("user"), cstr("x")).subarray(4)))).toBe(
      "unterminated-string",
    );
  });

  it("a Bind whose format count matches neither one nor the parameters", () => {
    const bad = msg(
      "B",
      cstr(""),
      cstr(""),
      i16(2),
      i16(0),
      i16(0),
      i16(3),
      i32(-1),
      i32(-1),
      i32(-1),
      i16(0),
    );
    expect(reason(p.decodeBind(bodyOf(bad)))).toBe("invalid-value");
  });

  it("a Bind with a format code other than 0 or 1", () => {
    expect(reason(p.decodeBind(bodyOf(msg("B", cstr(""), cstr(""), i16(0), i16(0), i16(1), i16(7)))))).toBe(
      "invalid-value",
    );
  });

  it("a parameter length below -1", () => {
    expect(reason(p.decodeBind(bodyOf(msg("B", cstr(""), cstr(""), i16(0), i16(1), i32(-5), i16(0)))))).toBe(
      "invalid-value",
    );
    expect(reason(p.decodeDataRow(bodyOf(msg("D", i16(1), i32(-2)))))).toBe("invalid-value");
  });

  it("a Describe or Close target other than S or P", () => {
    expect(reason(p.decodeDescribe(bodyOf(msg("D", i8(0x58), cstr("x")))))).toBe("invalid-value");
    expect(reason(p.decodeClose(bodyOf(msg("C", i8(0x73), cstr("x")))))).toBe("invalid-value");
  });

  it("a ReadyForQuery status other than I, T or E", () => {
    expect(reason(p.decodeReadyForQuery(Buffer.from("X")))).toBe("invalid-value");
  });

  it("an unknown authentication kind", () => {
    expect(reason(p.decodeAuthentication(Buffer.from(i32(6))))).toBe("invalid-value");
  });

  it("an MD5 request whose salt is not 4 bytes", () => {
    expect(reason(p.decodeAuthentication(Buffer.from([...i32(5), 1, 2, 3])))).toBe("truncated");
    expect(reason(p.decodeAuthentication(Buffer.from([...i32(5), 1, 2, 3, 4, 5])))).toBe("trailing-bytes");
  });

  it("cancel keys shorter than 4 or longer than 256 bytes", () => {
    const short = untyped(i32(80877102), i32(1), raw([1, 2, 3])).subarray(4);
    const long = untyped(i32(80877102), i32(1), raw(new Uint8Array(257))).subarray(4);
    const longest = untyped(i32(80877102), i32(1), raw(new Uint8Array(256))).subarray(4);
    expect(reason(p.decodeStartupPacket(short))).toBe("invalid-value");
    expect(reason(p.decodeStartupPacket(long))).toBe("invalid-value");
    expect(reason(p.decodeStartupPacket(longest))).toBeUndefined();
    expect(reason(p.decodeBackendKeyData(Buffer.from([...i32(1), 1, 2])))).toBe("invalid-value");
  });

  it("a textual COPY that declares a binary column", () => {
    expect(reason(p.decodeCopyInResponse(bodyOf(msg("G", i8(0), i16(1), i16(1)))))).toBe("invalid-value");
    expect(reason(p.decodeCopyOutResponse(bodyOf(msg("H", i8(2), i16(0)))))).toBe("invalid-value");
  });

  it("a negative option count in NegotiateProtocolVersion", () => {
    expect(reason(p.decodeNegotiateProtocolVersion(bodyOf(msg("v", i32(0), i32(-1)))))).toBe("invalid-value");
  });

  it("a count promising more items than the body holds", () => {
    expect(reason(p.decodeParse(bodyOf(msg("P", cstr(""), cstr("x"), i16(3), i32(23)))))).toBe("truncated");
    expect(reason(p.decodeParameterDescription(bodyOf(msg("t", i16(3), i32(23)))))).toBe("truncated");
    expect(reason(p.decodeDataRow(bodyOf(msg("D", i16(2), i32(1), raw("a")))))).toBe("truncated");
  });

  it("a code that does not exist in that direction", () => {
    const frame = { code: 0x5a, payload: Buffer.from("I"), bytes: Buffer.alloc(0) };
    expect(reason(p.decodeFrontendMessage(frame))).toBe("unknown-code");
    expect(reason(p.decodeBackendMessage({ ...frame, code: 0x51 }))).toBe("unknown-code");
  });

  it("a startup packet too short to hold its request code", () => {
    expect(reason(p.decodeStartupPacket(Buffer.from([0, 3])))).toBe("truncated");
  });
});

describe("decoders keep what the protocol allows", () => {
  it("skip ErrorResponse fields added by newer servers", () => {
    const body = bodyOf(
      msg("E", i8(0x43), cstr("XX000"), i8(0x5a), cstr("future"), i8(0x4d), cstr("m"), i8(0)),
    );
    expect(p.decodeErrorResponse(body)).toEqual({
      type: "ErrorResponse",
      fields: { code: "XX000", message: "m" },
    });
  });

  it("a parameter called __proto__ is an ordinary startup parameter", () => {
    const body = untyped(i32(196608), cstr("__proto__"), cstr("x"), i8(0)).subarray(4);
    const decoded = p.decodeStartupPacket(body);
    if (p.isProtocolFault(decoded) || decoded.type !== "StartupMessage") throw new Error("not decoded");
    expect(Object.getPrototypeOf(decoded.parameters)).toBeNull();
    expect(Object.entries(decoded.parameters)).toEqual([["__proto__", "x"]]);
  });

  it("reads the protocol version's major and minor halves", () => {
    expect([p.protocolMajor(p.ProtocolVersion.v3_2), p.protocolMinor(p.ProtocolVersion.v3_2)]).toEqual([
      3, 2,
    ]);
  });

  it("names codes per direction", () => {
    expect(p.frontendCodeName(0x44)).toBe("Describe");
    expect(p.backendCodeName(0x44)).toBe("DataRow");
    expect(p.backendCodeName(0x01)).toBe("unknown(0x1)");
    expect(p.frontendCodeName(0)).toBe("StartupPacket");
  });
});
