import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BackendFramer,
  copyFrame,
  FaultReason,
  FrontendFramer,
  isProtocolFault,
  type ProtocolFault,
  STARTUP_FRAME_CODE,
} from "../src/index.js";
import { cstr, i8, i16, i32, msg, raw, untyped } from "./support/bytes.js";
import { drain } from "./support/frames.js";

const startup = untyped(i32(196608), cstr("user"), cstr("alice"), cstr("database"), cstr("app"), i8(0));
const sslRequest = untyped(i32(80877103));
const gssencRequest = untyped(i32(80877104));
const query = msg("Q", cstr("SELECT 1"));
const parse = msg("P", cstr("s1"), cstr("SELECT $1::int"), i16(1), i32(23));
const bind = msg("B", cstr(""), cstr("s1"), i16(0), i16(1), i32(1), raw("7"), i16(0));
const execute = msg("E", cstr(""), i32(0));
const sync = msg("S");
const clientStream = Buffer.concat([sslRequest, startup, query, parse, bind, execute, sync]);
const clientMessages = [sslRequest, startup, query, parse, bind, execute, sync];

const serverMessages = [
  msg("R", i32(0)),
  msg("S", cstr("server_version"), cstr("15.0")),
  msg("K", i32(42), i32(0x01020304)),
  msg("Z", i8(0x49)),
  msg("T", i16(1), cstr("n"), i32(0), i16(0), i32(23), i16(4), i32(-1), i16(0)),
  msg("D", i16(1), i32(1), raw("1")),
  msg("C", cstr("SELECT 1")),
  msg("Z", i8(0x49)),
];
const serverStream = Buffer.concat(serverMessages);

function asFault(value: unknown): ProtocolFault {
  if (!isProtocolFault(value)) throw new Error(`expected a fault, got ${JSON.stringify(value)}`);
  return value;
}

describe("FrontendFramer", () => {
  it("cuts startup packets without a code byte, then typed messages, at every split point", () => {
    for (let split = 0; split <= clientStream.length; split++) {
      const framer = new FrontendFramer();
      framer.push(clientStream.subarray(0, split));
      const frames = drain(framer);
      framer.push(clientStream.subarray(split));
      frames.push(...drain(framer));
      expect(frames.map((f) => (isProtocolFault(f) ? f : f.bytes))).toEqual(clientMessages);
      expect(frames.slice(0, 2).map((f) => !isProtocolFault(f) && f.code)).toEqual([
        STARTUP_FRAME_CODE,
        STARTUP_FRAME_CODE,
      ]);
      expect(framer.phase).toBe("authentication");
    }
  });

  it("cuts the same messages when fed one byte at a time", () => {
    const framer = new FrontendFramer();
    const frames = [];
    for (const byte of clientStream) {
      framer.push(Buffer.from([byte]));
      frames.push(...drain(framer));
    }
    expect(frames.map((f) => !isProtocolFault(f) && f.bytes)).toEqual(clientMessages);
  });

  it("gives the body alone as payload and the whole message as bytes", () => {
    const framer = new FrontendFramer();
    framer.markAuthenticated();
    framer.push(query);
    const frame = framer.next();
    if (frame === null || isProtocolFault(frame)) throw new Error("no frame");
    expect(frame.code).toBe(0x51);
    expect(frame.payload).toEqual(Buffer.from("SELECT 1\0"));
    expect(frame.bytes).toEqual(query);
  });

  it("stays in the startup phase after SSLRequest, GSSENCRequest and CancelRequest", () => {
    const cancel = untyped(i32(80877102), i32(7), i32(9));
    for (const packet of [sslRequest, gssencRequest, cancel]) {
      const framer = new FrontendFramer();
      framer.push(packet);
      expect(drain(framer)).toHaveLength(1);
      expect(framer.phase).toBe("startup");
    }
  });

  it("switches to typed messages on request", () => {
    const framer = new FrontendFramer();
    framer.enterTypedPhase();
    framer.push(sync);
    expect(drain(framer).map((f) => !isProtocolFault(f) && f.code)).toEqual([0x53]);
  });

  it("rejects a startup length below 8 and a negative one", () => {
    for (const length of [0, 3, 4, 7, -1, -2147483648]) {
      const framer = new FrontendFramer();
      framer.push(Buffer.from([...i32(length), 0, 0, 0, 0]));
      expect(asFault(framer.next()).reason).toBe(FaultReason.lengthTooShort);
    }
  });

  it("rejects a startup packet over 10000 bytes as soon as its length is read", () => {
    const framer = new FrontendFramer();
    framer.push(Buffer.from(i32(10_001)));
    expect(asFault(framer.next()).reason).toBe(FaultReason.lengthTooLong);
  });

  it("caps typed messages tightly until authenticated, then at the configured limit", () => {
    const big = msg("Q", cstr("x".repeat(70_000)));
    const before = new FrontendFramer();
    before.enterTypedPhase();
    before.push(big);
    expect(asFault(before.next()).reason).toBe(FaultReason.lengthTooLong);

    const after = new FrontendFramer();
    after.markAuthenticated();
    after.push(big);
    expect(drain(after)).toHaveLength(1);

    const capped = new FrontendFramer({ maxLength: 100 });
    capped.markAuthenticated();
    capped.push(msg("Q", cstr("y".repeat(100))));
    expect(asFault(capped.next()).reason).toBe(FaultReason.lengthTooLong);

    const raised = new FrontendFramer({ maxLength: 100 });
    raised.markAuthenticated();
    raised.setMaxLength(1000);
    raised.push(msg("Q", cstr("y".repeat(100))));
    expect(drain(raised)).toHaveLength(1);
  });

  it("rejects typed lengths below 4, including negative ones", () => {
    for (const length of [0, 1, 3, -1, -100]) {
      const framer = new FrontendFramer();
      framer.markAuthenticated();
      framer.push(Buffer.from([0x51, ...i32(length)]));
      expect(asFault(framer.next()).reason).toBe(FaultReason.lengthTooShort);
    }
  });

  it("copies a frame so it owns its bytes", () => {
    const framer = new FrontendFramer();
    framer.markAuthenticated();
    const chunk = Buffer.from(query);
    framer.push(chunk);
    const frame = framer.next();
    if (frame === null || isProtocolFault(frame)) throw new Error("no frame");
    const copy = copyFrame(frame);
    chunk.fill(0);
    expect(copy.bytes).toEqual(query);
    expect(copy.payload).toEqual(query.subarray(5));
    expect(copy.code).toBe(0x51);
  });

  it("stays faulted: later pushes are ignored and next() returns the same fault", () => {
    const framer = new FrontendFramer();
    framer.markAuthenticated();
    framer.push(Buffer.from([0x51, ...i32(2)]));
    const fault = asFault(framer.next());
    framer.push(sync);
    expect(framer.next()).toBe(fault);
    expect(framer.fault).toBe(fault);
    expect(framer.bufferedLength).toBe(0);
  });

  it("waits for the rest of a truncated body instead of reading past it", () => {
    const framer = new FrontendFramer();
    framer.markAuthenticated();
    framer.push(query.subarray(0, query.length - 1));
    expect(framer.next()).toBeNull();
    expect(framer.bufferedLength).toBe(query.length - 1);
  });

  it("hands over unread bytes so cleartext sent after SSLRequest can be refused", () => {
    const framer = new FrontendFramer();
    framer.push(Buffer.concat([sslRequest, query]));
    const first = framer.next();
    expect(first !== null && !isProtocolFault(first) && first.bytes).toEqual(sslRequest);
    expect(framer.takeBuffered()).toEqual(query);
    expect(framer.bufferedLength).toBe(0);
  });

  it("never rewrites bytes of frames it already returned", () => {
    const framer = new FrontendFramer();
    framer.markAuthenticated();
    framer.push(Buffer.concat([query, query.subarray(0, 3)]));
    const first = framer.next();
    if (first === null || isProtocolFault(first)) throw new Error("no frame");
    const copy = Buffer.from(first.bytes);
    for (let i = 0; i < 50; i++) framer.push(Buffer.from([0xff]));
    expect(first.bytes).toEqual(copy);
  });

  it("never throws on arbitrary bytes in arbitrary chunks, in any phase", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }),
        fc.constantFrom("startup", "authentication", "ready"),
        (chunks, phase) => {
          const framer = new FrontendFramer({ maxLength: 4096 });
          if (phase !== "startup") framer.enterTypedPhase();
          if (phase === "ready") framer.markAuthenticated();
          for (const chunk of chunks) {
            framer.push(Buffer.from(chunk));
            drain(framer);
          }
        },
      ),
    );
  });
});

describe("BackendFramer", () => {
  it("cuts a server stream at every split point", () => {
    for (let split = 0; split <= serverStream.length; split++) {
      const framer = new BackendFramer();
      framer.push(serverStream.subarray(0, split));
      const frames = drain(framer);
      framer.push(serverStream.subarray(split));
      frames.push(...drain(framer));
      expect(frames.map((f) => !isProtocolFault(f) && f.bytes)).toEqual(serverMessages);
    }
  });

  it("cuts a server stream at every pair of split points", () => {
    for (let a = 0; a <= serverStream.length; a += 3) {
      for (let b = a; b <= serverStream.length; b += 5) {
        const framer = new BackendFramer();
        const frames = [];
        for (const part of [
          serverStream.subarray(0, a),
          serverStream.subarray(a, b),
          serverStream.subarray(b),
        ]) {
          framer.push(part);
          frames.push(...drain(framer));
        }
        expect(frames.map((f) => !isProtocolFault(f) && f.bytes)).toEqual(serverMessages);
      }
    }
  });

  it("reads the one-byte answer to SSLRequest, then frames what follows", () => {
    const framer = new BackendFramer();
    expect(framer.nextEncryptionResponse()).toBeNull();
    framer.push(Buffer.concat([Buffer.from("N"), serverMessages[0]!]));
    expect(framer.nextEncryptionResponse()).toBe("N");
    expect(drain(framer)).toHaveLength(1);

    const accepted = new BackendFramer();
    accepted.push(Buffer.from("S"));
    expect(accepted.nextEncryptionResponse()).toBe("S");
    expect(accepted.bufferedLength).toBe(0);
  });

  it("leaves an ErrorResponse answering SSLRequest in place to be framed", () => {
    const error = msg("E", i8(0x53), cstr("FATAL"), i8(0));
    const framer = new BackendFramer();
    framer.push(error);
    expect(framer.nextEncryptionResponse()).toBe("E");
    expect(drain(framer).map((f) => !isProtocolFault(f) && f.bytes)).toEqual([error]);
  });

  it("faults on any other answer byte to SSLRequest", () => {
    const framer = new BackendFramer();
    framer.push(Buffer.from("X"));
    expect(asFault(framer.nextEncryptionResponse()).reason).toBe(FaultReason.invalidValue);
  });

  it("rejects lengths below 4 and above its cap", () => {
    const short = new BackendFramer();
    short.push(Buffer.from([0x44, ...i32(-7)]));
    expect(asFault(short.next()).reason).toBe(FaultReason.lengthTooShort);

    const long = new BackendFramer({ maxLength: 64 });
    long.push(Buffer.from([0x44, ...i32(65)]));
    expect(asFault(long.next()).reason).toBe(FaultReason.lengthTooLong);
  });

  it("frames any chunking of a valid stream into the same messages", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: serverStream.length }), { maxLength: 12 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), serverStream.length];
        const framer = new BackendFramer();
        const frames = [];
        for (let i = 1; i < points.length; i++) {
          framer.push(serverStream.subarray(points[i - 1], points[i]));
          frames.push(...drain(framer));
        }
        expect(frames.map((f) => !isProtocolFault(f) && f.bytes)).toEqual(serverMessages);
      }),
    );
  });

  it("never throws on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }), (chunks) => {
        const framer = new BackendFramer({ maxLength: 4096 });
        for (const chunk of chunks) {
          framer.push(Buffer.from(chunk));
          framer.nextEncryptionResponse();
          drain(framer);
        }
      }),
    );
  });
});
