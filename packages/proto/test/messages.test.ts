import { describe, expect, it } from "vitest";
import {
  BackendFramer,
  decodeBackendMessage,
  decodeFrontendMessage,
  FrontendFramer,
  isProtocolFault,
} from "../src/index.js";
import { messageCases } from "./support/cases.js";

function payloadOf(c: (typeof messageCases)[number]): Buffer {
  return c.expected.subarray(c.direction === "startup" ? 4 : 5);
}

describe.each(messageCases)("$name", (c) => {
  it("encodes to the bytes the protocol documents", () => {
    expect(c.encoded).toEqual(c.expected);
  });

  it("decodes those bytes back to the same message", () => {
    expect(c.decode(payloadOf(c))).toEqual(c.value);
  });

  it("is framed and dispatched by its code", () => {
    if (c.direction === "backend") {
      const framer = new BackendFramer();
      framer.push(c.encoded);
      const frame = framer.next();
      if (frame === null || isProtocolFault(frame)) throw new Error("not framed");
      expect(decodeBackendMessage(frame)).toEqual(c.value);
    } else {
      const framer = new FrontendFramer();
      if (c.direction === "frontend") framer.markAuthenticated();
      framer.push(c.encoded);
      const frame = framer.next();
      if (frame === null || isProtocolFault(frame)) throw new Error("not framed");
      expect(frame.bytes).toEqual(c.expected);
      if (c.direction === "frontend" && frame.code !== 0x70)
        expect(decodeFrontendMessage(frame)).toEqual(c.value);
    }
  });
});

describe.each(messageCases.filter((c) => c.strict !== false))("$name when damaged", (c) => {
  it("is refused as a fault value when truncated (or, for fixed shapes, lengthened)", () => {
    const payload = payloadOf(c);
    const from = c.direction === "startup" ? 4 : 0;
    const to = c.strict === true ? payload.length : Number(c.strict);
    for (let end = from; end < to; end++) {
      expect(isProtocolFault(c.decode(payload.subarray(0, end))), `prefix of ${end} bytes`).toBe(true);
    }
    if (c.strict === true)
      expect(isProtocolFault(c.decode(Buffer.concat([payload, Buffer.from([0x41])])))).toBe(true);
  });
});
