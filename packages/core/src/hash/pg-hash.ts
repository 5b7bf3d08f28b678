/**
 * PostgreSQL's extended hash functions (src/common/hashfn.c, Bob Jenkins' lookup3), so that
 * placement computed here equals `hashtextextended(key, 0)` / `hashint8extended(key, 0)` computed
 * by SQL inside PostgreSQL. Written for little-endian servers, which is what PostgreSQL runs on in
 * practice: the byte order of the 4-byte words fed to the mixer is little-endian.
 *
 * All arithmetic is on uint32 held in JS numbers: `| 0`/`>>> 0` truncate, `Math.imul` is unneeded
 * because lookup3 only adds, subtracts, xors and rotates.
 */

/** The two halves of a uint64 result: PostgreSQL returns `(b << 32) | c`. */
export interface Hash64 {
  readonly high: number;
  readonly low: number;
}

const INITIAL = (0x9e3779b9 + 3923095) >>> 0;

let a = 0;
let b = 0;
let c = 0;

function rot(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

function mix(): void {
  a = (a - c) >>> 0;
  a = (a ^ rot(c, 4)) >>> 0;
  c = (c + b) >>> 0;
  b = (b - a) >>> 0;
  b = (b ^ rot(a, 6)) >>> 0;
  a = (a + c) >>> 0;
  c = (c - b) >>> 0;
  c = (c ^ rot(b, 8)) >>> 0;
  b = (b + a) >>> 0;
  a = (a - c) >>> 0;
  a = (a ^ rot(c, 16)) >>> 0;
  c = (c + b) >>> 0;
  b = (b - a) >>> 0;
  b = (b ^ rot(a, 19)) >>> 0;
  a = (a + c) >>> 0;
  c = (c - b) >>> 0;
  c = (c ^ rot(b, 4)) >>> 0;
  b = (b + a) >>> 0;
}

function final(): void {
  c = (c ^ b) >>> 0;
  c = (c - rot(b, 14)) >>> 0;
  a = (a ^ c) >>> 0;
  a = (a - rot(c, 11)) >>> 0;
  b = (b ^ a) >>> 0;
  b = (b - rot(a, 25)) >>> 0;
  c = (c ^ b) >>> 0;
  c = (c - rot(b, 16)) >>> 0;
  a = (a ^ c) >>> 0;
  a = (a - rot(c, 4)) >>> 0;
  b = (b ^ a) >>> 0;
  b = (b - rot(a, 14)) >>> 0;
  c = (c ^ b) >>> 0;
  c = (c - rot(b, 24)) >>> 0;
}

/** A non-zero seed is hashed in as a 12-byte chunk (high word, low word, zero) before the data. */
function applySeed(seed: bigint): void {
  if (seed === 0n) return;
  const unsigned = BigInt.asUintN(64, seed);
  a = (a + Number(unsigned >> 32n)) >>> 0;
  b = (b + Number(unsigned & 0xffffffffn)) >>> 0;
  mix();
}

function word(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** `hash_bytes_extended(k, len, seed)`. */
export function hashBytesExtended(bytes: Uint8Array, seed = 0n): Hash64 {
  let length = bytes.length;
  a = b = c = (INITIAL + length) >>> 0;
  applySeed(seed);
  let at = 0;
  while (length >= 12) {
    a = (a + word(bytes, at)) >>> 0;
    b = (b + word(bytes, at + 4)) >>> 0;
    c = (c + word(bytes, at + 8)) >>> 0;
    mix();
    at += 12;
    length -= 12;
  }
  // The tail: bytes 0-3 into a, 4-7 into b, 8-10 into the upper three bytes of c (its lowest
  // byte stands for the length in Jenkins' original), little-endian within each word.
  if (length >= 9) c = (c + ((tailWord(bytes, at + 8, length - 8) << 8) >>> 0)) >>> 0;
  if (length >= 5) b = (b + tailWord(bytes, at + 4, Math.min(4, length - 4))) >>> 0;
  if (length >= 1) a = (a + tailWord(bytes, at, Math.min(4, length))) >>> 0;
  final();
  return { high: b, low: c };
}

function tailWord(bytes: Uint8Array, at: number, count: number): number {
  let value = 0;
  for (let index = count - 1; index >= 0; index--) value = ((value << 8) | bytes[at + index]!) >>> 0;
  return value;
}

/** `hash_bytes_uint32_extended(k, seed)`. */
export function hashUint32Extended(k: number, seed = 0n): Hash64 {
  a = b = c = (INITIAL + 4) >>> 0;
  applySeed(seed);
  a = (a + (k >>> 0)) >>> 0;
  final();
  return { high: b, low: c };
}

const encoder = new TextEncoder();

/** `hashtextextended(text, seed)` for a deterministic collation: the hash of the UTF-8 bytes. */
export function hashTextExtendedParts(text: string, seed = 0n): Hash64 {
  return hashBytesExtended(encoder.encode(text), seed);
}

/**
 * `hashint8extended(value, seed)`. PostgreSQL folds the high half into the low one (complemented
 * for negatives) so that int2, int4 and int8 of equal value hash alike; the fold is kept here.
 */
export function hashInt8ExtendedParts(value: bigint, seed = 0n): Hash64 {
  const v = BigInt.asIntN(64, value);
  const low = Number(BigInt.asUintN(32, v));
  const high = Number(BigInt.asUintN(32, v >> 32n));
  const folded = v >= 0n ? low ^ high : low ^ ~high;
  return hashUint32Extended(folded >>> 0, seed);
}

/** The hash as PostgreSQL prints it: a signed bigint. */
export function toSignedInt64(hash: Hash64): bigint {
  return BigInt.asIntN(64, (BigInt(hash.high) << 32n) | BigInt(hash.low));
}

/** `SELECT hashtextextended($1, seed)`. */
export function hashTextExtended(text: string, seed = 0n): bigint {
  return toSignedInt64(hashTextExtendedParts(text, seed));
}

/** `SELECT hashint8extended($1, seed)`. */
export function hashInt8Extended(value: bigint, seed = 0n): bigint {
  return toSignedInt64(hashInt8ExtendedParts(value, seed));
}

/**
 * The hash read as an unsigned 64-bit number, modulo `count`, without BigInt: 2^32 mod count is
 * folded in so the result equals `(hash::numeric + 2^64) % count` for negative hashes in SQL.
 */
export function unsignedModulo(hash: Hash64, count: number): number {
  const wordModulo = 4_294_967_296 % count;
  return ((((hash.high % count) * wordModulo) % count) + (hash.low % count)) % count;
}
