/**
 * An independent byte builder for expected values: plain number arrays, no production code, so a
 * bug in the Writer cannot hide in both the encoder and the expectation.
 */
export type Part = number[];

export const i8 = (n: number): Part => [n & 0xff];
export const i16 = (n: number): Part => [(n >> 8) & 0xff, n & 0xff];
export const i32 = (n: number): Part => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
export const cstr = (s: string): Part => [...new TextEncoder().encode(s), 0];
export const raw = (b: Uint8Array | number[] | string): Part => [
  ...(typeof b === "string" ? new TextEncoder().encode(b) : b),
];
export const char = (c: string): number => c.charCodeAt(0);

/** A typed message: code letter, length (counting itself), body. */
export function msg(code: string, ...parts: Part[]): Buffer {
  const body = parts.flat();
  return Buffer.from([char(code), ...i32(body.length + 4), ...body]);
}

/** A startup-phase packet: length then body, no code byte. */
export function untyped(...parts: Part[]): Buffer {
  const body = parts.flat();
  return Buffer.from([...i32(body.length + 4), ...body]);
}

/** The body of a message built by `msg` (everything after the 5-byte header). */
export function bodyOf(message: Buffer): Buffer {
  return message.subarray(5);
}
