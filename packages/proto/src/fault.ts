/**
 * Why a byte stream or a message body was rejected. Faults are values: the framer and every decoder
 * return them instead of throwing, so one malformed connection can be closed without unwinding the
 * process.
 */
export const FaultReason = {
  /** A length word below 4 (it counts itself), negative when read as int32. */
  lengthTooShort: "length-too-short",
  /** A length word above the cap of the current phase. */
  lengthTooLong: "length-too-long",
  /** The body ends before a field it announces. */
  truncated: "truncated",
  /** A string runs to the end of the body without its NUL terminator. */
  unterminatedString: "unterminated-string",
  /** Bytes left over after the last field of a fixed-shape message. */
  trailingBytes: "trailing-bytes",
  /** A field holds a value the protocol does not allow (bad enum byte, negative count...). */
  invalidValue: "invalid-value",
  /** A startup packet asks for something this side does not speak. */
  unsupportedRequest: "unsupported-request",
  /** A message code that does not exist in this direction. */
  unknownCode: "unknown-code",
  /** The framer already failed; it stays failed for the rest of the connection. */
  faulted: "faulted",
} as const;
export type FaultReason = (typeof FaultReason)[keyof typeof FaultReason];

/** A protocol error value: what went wrong and where, never thrown. */
export interface ProtocolFault {
  readonly kind: "protocol-fault";
  readonly reason: FaultReason;
  readonly message: string;
}

export function protocolFault(reason: FaultReason, message: string): ProtocolFault {
  return { kind: "protocol-fault", reason, message };
}

/** Narrows a decoder or framer result to the fault case. */
export function isProtocolFault(value: unknown): value is ProtocolFault {
  return (
    typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "protocol-fault"
  );
}
