import { Writer } from "./writer.js";

/** A message without its `type` tag: what encoders take. */
export type Fields<T extends { readonly type: string }> = Omit<T, "type">;

const scratch = new Writer(4096);

/** Encodes one message with a shared writer and returns a copy of its bytes. */
export function encodeOne(write: (writer: Writer) => void): Buffer {
  scratch.reset();
  write(scratch);
  return scratch.flush();
}

/** Format codes: 0 text, 1 binary. */
export type FormatCode = 0 | 1;

export function isFormatCode(value: number): value is FormatCode {
  return value === 0 || value === 1;
}
