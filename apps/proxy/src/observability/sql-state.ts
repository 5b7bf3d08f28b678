/** `C`: the field of an ErrorResponse that carries the SQLSTATE. */
const CODE_FIELD = 0x43;
/** `V`: the severity, never translated (PostgreSQL 9.6 and later). */
const SEVERITY_FIELD = 0x56;

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

/**
 * True when an ErrorResponse payload's severity is FATAL or PANIC: the server ends the session
 * after it, and the client that reads it expects its connection to close.
 */
export function endsSession(payload: Buffer): boolean {
  let at = 0;
  while (at < payload.length) {
    const type = payload[at]!;
    if (type === 0) break;
    const end = payload.indexOf(0, at + 1);
    if (end < 0) break;
    if (type === SEVERITY_FIELD) {
      const severity = payload.toString("latin1", at + 1, end);
      return severity === "FATAL" || severity === "PANIC";
    }
    at = end + 1;
  }
  return false;
}
