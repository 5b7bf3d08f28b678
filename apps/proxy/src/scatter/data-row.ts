/**
 * Reading DataRow payloads (int16 count, then int32 length + bytes per column, -1 for NULL)
 * without decoding them: only the columns a merge compares are looked at.
 */

/** The byte offset where column `index` starts (its length word). */
function columnOffset(payload: Buffer, index: number): number {
  let at = 2;
  for (let i = 0; i < index; i++) {
    const length = payload.readInt32BE(at);
    at += 4 + Math.max(length, 0);
  }
  return at;
}

export function columnCount(payload: Buffer): number {
  return payload.readInt16BE(0);
}

/** The values of columns `from`..end (views into the payload; null for SQL NULL). */
export function trailingValues(payload: Buffer, from: number): (Buffer | null)[] {
  const count = payload.readInt16BE(0);
  const values: (Buffer | null)[] = [];
  let at = columnOffset(payload, from);
  for (let i = from; i < count; i++) {
    const length = payload.readInt32BE(at);
    at += 4;
    if (length < 0) values.push(null);
    else {
      values.push(payload.subarray(at, at + length));
      at += length;
    }
  }
  return values;
}

/** Every column's value (views into the payload). */
export function allValues(payload: Buffer): (Buffer | null)[] {
  return trailingValues(payload, 0);
}

/** The payload with its last `hidden` columns cut off (the merge's sort columns). */
export function withoutTrailing(payload: Buffer, hidden: number): Buffer {
  if (hidden === 0) return payload;
  const keep = payload.readInt16BE(0) - hidden;
  const end = columnOffset(payload, keep);
  const out = Buffer.allocUnsafe(end);
  payload.copy(out, 0, 0, end);
  out.writeInt16BE(keep, 0);
  return out;
}

/** A whole DataRow message around a payload. */
export function dataRowFrame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = 0x44;
  out.writeInt32BE(4 + payload.length, 1);
  payload.copy(out, 5);
  return out;
}
