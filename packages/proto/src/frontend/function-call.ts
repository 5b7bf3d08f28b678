import { FrontendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields, type FormatCode, isFormatCode } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** The legacy fast-path call of a function by OID. */
export interface FunctionCall {
  readonly type: "FunctionCall";
  readonly functionOid: number;
  readonly argFormats: readonly FormatCode[];
  /** Argument values as views; null is SQL NULL. */
  readonly args: readonly (Buffer | null)[];
  readonly resultFormat: FormatCode;
}

export function decodeFunctionCall(payload: Buffer): FunctionCall | ProtocolFault {
  const r = new Reader(payload, "FunctionCall");
  const functionOid = r.u32("function oid");
  const formatCount = r.u16("argument format count");
  const argFormats: FormatCode[] = [];
  for (let i = 0; i < formatCount && r.fault === null; i++) {
    const code = r.i16("argument format code");
    if (!isFormatCode(code)) r.invalid(`argument format code ${code}`);
    argFormats.push(code as FormatCode);
  }
  const count = r.u16("argument count");
  const args: (Buffer | null)[] = [];
  for (let i = 0; i < count && r.fault === null; i++) args.push(r.nullableBytes("argument"));
  const resultFormat = r.i16("result format code");
  if (!isFormatCode(resultFormat)) r.invalid(`result format code ${resultFormat}`);
  if (formatCount > 1 && formatCount !== count)
    r.invalid(`${formatCount} argument formats for ${count} arguments`);
  return r.result({
    type: "FunctionCall",
    functionOid,
    argFormats,
    args,
    resultFormat: resultFormat as FormatCode,
  });
}

export function writeFunctionCall(w: Writer, msg: Fields<FunctionCall>): Writer {
  w.begin(FrontendCode.FunctionCall).u32(msg.functionOid).u16(msg.argFormats.length);
  for (const f of msg.argFormats) w.i16(f);
  w.u16(msg.args.length);
  for (const a of msg.args) w.nullableBytes(a);
  return w.i16(msg.resultFormat).end();
}

export function encodeFunctionCall(msg: Fields<FunctionCall>): Buffer {
  return encodeOne((w) => writeFunctionCall(w, msg));
}
