/** `C`: the field of an ErrorResponse that carries the SQLSTATE. */
const CODE_FIELD = 0x43;

/**
 * The SQLSTATE of an ErrorResponse payload (the bytes after the code and length), read in place:
 * fields are a type byte and a NUL-terminated string each, ending with a lone NUL. A payload
 * without one (which a backend never sends) reads as `XX000`, PostgreSQL's internal error.
 */
export function sqlStateOf(payload: Buffer): string {
  let at = 0;
  while (at < payload.length) {
    const type = payload[at]!;
    if (type === 0) break;
    const end = payload.indexOf(0, at + 1);
    if (end < 0) break;
    if (type === CODE_FIELD) return payload.toString("latin1", at + 1, end);
    at = end + 1;
  }
  return "XX000";
}
