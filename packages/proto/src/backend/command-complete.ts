import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A statement finished; the tag names it and, for most DML, the row count ("INSERT 0 5"). */
export interface CommandComplete {
  readonly type: "CommandComplete";
  readonly tag: string;
}

export function decodeCommandComplete(payload: Buffer): CommandComplete | ProtocolFault {
  const r = new Reader(payload, "CommandComplete");
  const tag = r.cstring("command tag");
  return r.result({ type: "CommandComplete", tag });
}

/** The command tag of a CommandComplete payload, or null if it has no terminator. */
export function commandTag(payload: Buffer): string | null {
  const nul = payload.indexOf(0);
  if (nul === -1) return null;
  return payload.toString("latin1", 0, nul);
}

/**
 * The row count at the end of a command tag ("SELECT 3", "INSERT 0 3", "UPDATE 3"), read from the
 * payload bytes; null when the tag carries none ("BEGIN", "SET").
 */
export function commandRowCount(payload: Buffer): number | null {
  let end = payload.indexOf(0);
  if (end === -1) end = payload.length;
  let i = end - 1;
  let value = 0;
  let scale = 1;
  while (i >= 0) {
    const c = payload[i]!;
    if (c < 0x30 || c > 0x39) break;
    value += (c - 0x30) * scale;
    scale *= 10;
    i--;
  }
  if (i === end - 1 || i < 0 || payload[i] !== 0x20) return null;
  return value;
}

export function writeCommandComplete(w: Writer, msg: Fields<CommandComplete>): Writer {
  return w.begin(BackendCode.CommandComplete).cstring(msg.tag).end();
}

export function encodeCommandComplete(msg: Fields<CommandComplete>): Buffer {
  return encodeOne((w) => writeCommandComplete(w, msg));
}
