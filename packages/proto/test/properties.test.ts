import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as p from "../src/index.js";
import { messageCases } from "./support/cases.js";

const text = fc.string({ unit: "binary", maxLength: 24 }).map((s) => s.replaceAll("\0", ""));
const name = text.filter((s) => s.length > 0);
const bytes = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
const nullableBytes = fc.option(bytes, { nil: null });
const format = fc.constantFrom<p.FormatCode>(0, 1);
const int16 = fc.integer({ min: -32768, max: 32767 });
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const oid = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const key = fc
  .integer({ min: 4, max: 256 })
  .chain((n) => fc.uint8Array({ minLength: n, maxLength: n }))
  .map((b) => Buffer.from(b));

/** Formats count is 0, 1 or one per value, as the protocol requires. */
function valuesWithFormats() {
  return fc.array(nullableBytes, { maxLength: 6 }).chain((values) =>
    fc
      .oneof(fc.constant(0), fc.constant(1), fc.constant(values.length))
      .chain((n) => fc.array(format, { minLength: n, maxLength: n }))
      .map((formats) => ({ values, formats })),
  );
}

const errorFields: fc.Arbitrary<p.ErrorFields> = fc.record(
  Object.fromEntries(Object.keys(p.ErrorFieldCode).map((k) => [k, text])) as Record<
    p.ErrorFieldName,
    fc.Arbitrary<string>
  >,
  { requiredKeys: [] },
);

interface RoundTrip {
  readonly name: string;
  readonly arbitrary: fc.Arbitrary<{ readonly type: string }>;
  readonly encode: (m: never) => Buffer;
  readonly direction: "frontend" | "backend" | "startup";
}

function rt<T extends { readonly type: string }>(
  name: string,
  direction: RoundTrip["direction"],
  arbitrary: fc.Arbitrary<T>,
  encode: (m: T) => Buffer,
): RoundTrip {
  return { name, direction, arbitrary, encode: encode as (m: never) => Buffer };
}

const roundTrips: RoundTrip[] = [
  rt(
    "StartupMessage",
    "startup",
    fc.record({
      type: fc.constant("StartupMessage" as const),
      protocolVersion: fc.constantFrom(p.ProtocolVersion.v3_0, p.ProtocolVersion.v3_2),
      parameters: fc.dictionary(name, text, { maxKeys: 6 }).map((d) => Object.assign(Object.create(null), d)),
    }),
    p.encodeStartupMessage,
  ),
  rt(
    "CancelRequest",
    "startup",
    fc.record({ type: fc.constant("CancelRequest" as const), processId: int32, secretKey: key }),
    p.encodeCancelRequest,
  ),
  rt("Query", "frontend", fc.record({ type: fc.constant("Query" as const), sql: text }), p.encodeQuery),
  rt(
    "Parse",
    "frontend",
    fc.record({
      type: fc.constant("Parse" as const),
      name: text,
      sql: text,
      paramTypes: fc.array(oid, { maxLength: 8 }),
    }),
    p.encodeParse,
  ),
  rt(
    "Bind",
    "frontend",
    fc
      .record({
        portal: text,
        statement: text,
        params: valuesWithFormats(),
        resultFormats: fc.array(format, { maxLength: 5 }),
      })
      .map(({ portal, statement, params, resultFormats }) => ({
        type: "Bind" as const,
        portal,
        statement,
        paramFormats: params.formats,
        params: params.values,
        resultFormats,
      })),
    p.encodeBind,
  ),
  rt(
    "Describe",
    "frontend",
    fc.record({
      type: fc.constant("Describe" as const),
      target: fc.constantFrom<"S" | "P">("S", "P"),
      name: text,
    }),
    p.encodeDescribe,
  ),
  rt(
    "Close",
    "frontend",
    fc.record({
      type: fc.constant("Close" as const),
      target: fc.constantFrom<"S" | "P">("S", "P"),
      name: text,
    }),
    p.encodeClose,
  ),
  rt(
    "Execute",
    "frontend",
    fc.record({ type: fc.constant("Execute" as const), portal: text, maxRows: int32 }),
    p.encodeExecute,
  ),
  rt(
    "CopyData",
    "frontend",
    fc.record({ type: fc.constant("CopyData" as const), data: bytes }),
    p.encodeCopyData,
  ),
  rt(
    "CopyFail",
    "frontend",
    fc.record({ type: fc.constant("CopyFail" as const), message: text }),
    p.encodeCopyFail,
  ),
  rt(
    "FunctionCall",
    "frontend",
    fc
      .record({ functionOid: oid, args: valuesWithFormats(), resultFormat: format })
      .map(({ functionOid, args, resultFormat }) => ({
        type: "FunctionCall" as const,
        functionOid,
        argFormats: args.formats,
        args: args.values,
        resultFormat,
      })),
    p.encodeFunctionCall,
  ),
  rt(
    "Authentication",
    "backend",
    fc.oneof(
      fc.constantFrom(
        { type: "AuthenticationOk" as const },
        { type: "AuthenticationCleartextPassword" as const },
        { type: "AuthenticationKerberosV5" as const },
        { type: "AuthenticationGSS" as const },
        { type: "AuthenticationSSPI" as const },
      ),
      fc.record({
        type: fc.constant("AuthenticationMD5Password" as const),
        salt: fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => Buffer.from(b)),
      }),
      fc.record({
        type: fc.constant("AuthenticationSASL" as const),
        mechanisms: fc.array(name, { maxLength: 3 }),
      }),
      fc.record({
        type: fc.constantFrom(
          "AuthenticationSASLContinue" as const,
          "AuthenticationSASLFinal" as const,
          "AuthenticationGSSContinue" as const,
        ),
        data: bytes,
      }),
    ),
    p.encodeAuthentication,
  ),
  rt(
    "BackendKeyData",
    "backend",
    fc.record({ type: fc.constant("BackendKeyData" as const), processId: int32, secretKey: key }),
    p.encodeBackendKeyData,
  ),
  rt(
    "ParameterStatus",
    "backend",
    fc.record({ type: fc.constant("ParameterStatus" as const), name: text, value: text }),
    p.encodeParameterStatus,
  ),
  rt(
    "ReadyForQuery",
    "backend",
    fc.record({
      type: fc.constant("ReadyForQuery" as const),
      status: fc.constantFrom<p.TransactionStatus>("I", "T", "E"),
    }),
    p.encodeReadyForQuery,
  ),
  rt(
    "RowDescription",
    "backend",
    fc.record({
      type: fc.constant("RowDescription" as const),
      fields: fc.array(
        fc.record({
          name: text,
          tableOid: oid,
          columnAttr: int16,
          typeOid: oid,
          typeSize: int16,
          typeModifier: int32,
          format,
        }),
        { maxLength: 5 },
      ),
    }),
    p.encodeRowDescription,
  ),
  rt(
    "DataRow",
    "backend",
    fc.record({ type: fc.constant("DataRow" as const), values: fc.array(nullableBytes, { maxLength: 8 }) }),
    p.encodeDataRow,
  ),
  rt(
    "CommandComplete",
    "backend",
    fc.record({ type: fc.constant("CommandComplete" as const), tag: text }),
    p.encodeCommandComplete,
  ),
  rt(
    "ErrorResponse",
    "backend",
    fc.record({ type: fc.constant("ErrorResponse" as const), fields: errorFields }),
    p.encodeErrorResponse,
  ),
  rt(
    "NoticeResponse",
    "backend",
    fc.record({ type: fc.constant("NoticeResponse" as const), fields: errorFields }),
    p.encodeNoticeResponse,
  ),
  rt(
    "ParameterDescription",
    "backend",
    fc.record({
      type: fc.constant("ParameterDescription" as const),
      typeOids: fc.array(oid, { maxLength: 8 }),
    }),
    p.encodeParameterDescription,
  ),
  rt(
    "CopyOutResponse",
    "backend",
    fc
      .oneof(
        fc.record({
          format: fc.constant<p.FormatCode>(0),
          columnFormats: fc.array(fc.constant<p.FormatCode>(0), { maxLength: 4 }),
        }),
        fc.record({
          format: fc.constant<p.FormatCode>(1),
          columnFormats: fc.array(format, { maxLength: 4 }),
        }),
      )
      .map((body) => ({ type: "CopyOutResponse" as const, ...body })),
    p.encodeCopyOutResponse,
  ),
  rt(
    "NotificationResponse",
    "backend",
    fc.record({
      type: fc.constant("NotificationResponse" as const),
      processId: int32,
      channel: text,
      payload: text,
    }),
    p.encodeNotificationResponse,
  ),
  rt(
    "NegotiateProtocolVersion",
    "backend",
    fc.record({
      type: fc.constant("NegotiateProtocolVersion" as const),
      newestMinor: fc.nat(0xffff),
      unrecognizedOptions: fc.array(text, { maxLength: 4 }),
    }),
    p.encodeNegotiateProtocolVersion,
  ),
  rt(
    "FunctionCallResponse",
    "backend",
    fc.record({ type: fc.constant("FunctionCallResponse" as const), result: nullableBytes }),
    p.encodeFunctionCallResponse,
  ),
];

function decodeFramed(direction: RoundTrip["direction"], encoded: Buffer): unknown {
  if (direction === "backend") {
    const framer = new p.BackendFramer();
    framer.push(encoded);
    const frame = framer.next();
    if (frame === null || p.isProtocolFault(frame)) return frame;
    return framer.bufferedLength === 0 ? p.decodeBackendMessage(frame) : "leftover bytes";
  }
  const framer = new p.FrontendFramer();
  if (direction === "frontend") framer.markAuthenticated();
  framer.push(encoded);
  const frame = framer.next();
  if (frame === null || p.isProtocolFault(frame)) return frame;
  if (framer.bufferedLength !== 0) return "leftover bytes";
  return direction === "startup" ? p.decodeStartupPacket(frame.payload) : p.decodeFrontendMessage(frame);
}

describe("encode then decode", () => {
  it.each(roundTrips)("is the identity for $name", ({ arbitrary, encode, direction }) => {
    fc.assert(
      fc.property(arbitrary, (message) => {
        expect(decodeFramed(direction, encode(message as never))).toEqual(message);
      }),
      { numRuns: 150 },
    );
  });
});

describe("a stream of many messages", () => {
  const backend = roundTrips.filter((r) => r.direction === "backend");
  const anyBackendMessage = fc.oneof(
    ...backend.map((r) => r.arbitrary.map((m) => ({ message: m, bytes: r.encode(m as never) }))),
  );

  it("decodes to the same messages under any chunking", () => {
    fc.assert(
      fc.property(
        fc.array(anyBackendMessage, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (items, rawCuts) => {
          const stream = Buffer.concat(items.map((i) => i.bytes));
          const cuts = [
            0,
            ...rawCuts.map((c) => c % (stream.length + 1)).sort((a, b) => a - b),
            stream.length,
          ];
          const framer = new p.BackendFramer();
          const decoded: unknown[] = [];
          for (let i = 1; i < cuts.length; i++) {
            framer.push(stream.subarray(cuts[i - 1], cuts[i]));
            for (let f = framer.next(); f !== null; f = framer.next()) {
              if (p.isProtocolFault(f)) throw new Error(f.message);
              decoded.push(p.decodeBackendMessage(p.copyFrame(f)));
            }
          }
          expect(decoded).toEqual(items.map((i) => i.message));
          expect(framer.bufferedLength).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("arbitrary bytes", () => {
  const decoders = [...new Map(messageCases.map((c) => [c.decode, c.name])).entries()];

  it("never make a decoder throw: each returns a message or a fault", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (raw) => {
        const payload = Buffer.from(raw);
        for (const [decode] of decoders) {
          const result = decode(payload) as { type?: unknown; kind?: unknown };
          expect(typeof result.type === "string" || result.kind === "protocol-fault").toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("never make the dispatchers, views or peeks throw", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 80 }), (code, raw) => {
        const payload = Buffer.from(raw);
        const frame = { code, payload, bytes: payload };
        const front = p.decodeFrontendMessage(frame);
        const back = p.decodeBackendMessage(frame);
        expect(front).toBeTypeOf("object");
        expect(back).toBeTypeOf("object");
        const view = p.BindView.from(payload);
        if (!p.isProtocolFault(view)) {
          for (let i = 0; i < view.paramCount; i++) view.value(i);
        }
        const cursor = new p.DataRowCursor();
        cursor.reset(payload);
        let guard = 0;
        while (cursor.next()) guard++;
        expect(guard).toBeLessThanOrEqual(cursor.count);
        p.commandTag(payload);
        p.commandRowCount(payload);
        p.errorField(payload, p.ErrorFieldCode.code);
        p.readyForQueryStatus(frame);
      }),
      { numRuns: 500 },
    );
  });
});
