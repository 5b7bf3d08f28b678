import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/**
 * The server speaks an older minor version than the client asked for, or does not know some of
 * the `_pq_.` options of the StartupMessage. The session continues with the version given here.
 */
export interface NegotiateProtocolVersion {
  readonly type: "NegotiateProtocolVersion";
  /** The newest minor version the server supports for the requested major version. */
  readonly newestMinor: number;
  readonly unrecognizedOptions: readonly string[];
}

export function decodeNegotiateProtocolVersion(payload: Buffer): NegotiateProtocolVersion | ProtocolFault {
  const r = new Reader(payload, "NegotiateProtocolVersion");
  const newestMinor = r.i32("newest minor version");
  const count = r.i32("option count");
  if (count < 0) r.invalid(`negative option count ${count}`);
  const unrecognizedOptions: string[] = [];
  for (let i = 0; i < count && r.fault === null; i++) unrecognizedOptions.push(r.cstring("option name"));
  return r.result({ type: "NegotiateProtocolVersion", newestMinor, unrecognizedOptions });
}

export function writeNegotiateProtocolVersion(w: Writer, msg: Fields<NegotiateProtocolVersion>): Writer {
  w.begin(BackendCode.NegotiateProtocolVersion).i32(msg.newestMinor).i32(msg.unrecognizedOptions.length);
  for (const o of msg.unrecognizedOptions) w.cstring(o);
  return w.end();
}

export function encodeNegotiateProtocolVersion(msg: Fields<NegotiateProtocolVersion>): Buffer {
  return encodeOne((w) => writeNegotiateProtocolVersion(w, msg));
}
