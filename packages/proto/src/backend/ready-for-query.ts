import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import type { Frame } from "../framer.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block. */
export type TransactionStatus = "I" | "T" | "E";

export const TransactionStatusByte = { I: 0x49, T: 0x54, E: 0x45 } as const;

/** The server is ready for the next query; carries the transaction status. */
export interface ReadyForQuery {
  readonly type: "ReadyForQuery";
  readonly status: TransactionStatus;
}

function statusOf(byte: number): TransactionStatus | null {
  switch (byte) {
    case TransactionStatusByte.I:
      return "I";
    case TransactionStatusByte.T:
      return "T";
    case TransactionStatusByte.E:
      return "E";
    default:
      return null;
  }
}

export function decodeReadyForQuery(payload: Buffer): ReadyForQuery | ProtocolFault {
  const r = new Reader(payload, "ReadyForQuery");
  const byte = r.u8("transaction status");
  const status = statusOf(byte);
  if (status === null) r.invalid(`transaction status 0x${byte.toString(16)} is not I, T or E`);
  return r.result({ type: "ReadyForQuery", status: status ?? "I" });
}

/**
 * The transaction status of a ReadyForQuery frame, read from byte 5 of its bytes without decoding;
 * null if the frame is not a well-formed ReadyForQuery.
 */
export function readyForQueryStatus(frame: Frame): TransactionStatus | null {
  if (frame.code !== BackendCode.ReadyForQuery || frame.payload.length !== 1) return null;
  return statusOf(frame.payload[0]!);
}

export function writeReadyForQuery(w: Writer, msg: Fields<ReadyForQuery>): Writer {
  return w.begin(BackendCode.ReadyForQuery).u8(TransactionStatusByte[msg.status]).end();
}

export function encodeReadyForQuery(msg: Fields<ReadyForQuery>): Buffer {
  return encodeOne((w) => writeReadyForQuery(w, msg));
}
