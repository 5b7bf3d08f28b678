import { ProtocolVersion } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/**
 * The first packet of a session: protocol version, then name/value pairs (user, database,
 * options, application_name, `_pq_.`-prefixed protocol extensions...) ended by an empty name.
 */
export interface StartupMessage {
  readonly type: "StartupMessage";
  /** major << 16 | minor; see `ProtocolVersion`. */
  readonly protocolVersion: number;
  /** A null-prototype record, so a parameter called "__proto__" is just a parameter. */
  readonly parameters: Readonly<Record<string, string>>;
}

export function protocolMajor(version: number): number {
  return version >>> 16;
}

export function protocolMinor(version: number): number {
  return version & 0xffff;
}

export function decodeStartupMessage(payload: Buffer): StartupMessage | ProtocolFault {
  const r = new Reader(payload, "StartupMessage");
  const protocolVersion = r.i32("protocol version");
  const parameters: Record<string, string> = Object.create(null);
  for (;;) {
    const name = r.cstring("parameter name");
    if (r.fault !== null || name === "") break;
    parameters[name] = r.cstring(`value of ${name}`);
  }
  return r.result({ type: "StartupMessage", protocolVersion, parameters });
}

export function writeStartupMessage(
  w: Writer,
  msg: Partial<Fields<StartupMessage>> & Pick<StartupMessage, "parameters">,
): Writer {
  w.beginUntyped().i32(msg.protocolVersion ?? ProtocolVersion.v3_0);
  for (const [name, value] of Object.entries(msg.parameters)) w.cstring(name).cstring(value);
  return w.u8(0).end();
}

/** Parameters with an empty name cannot be sent: the empty name ends the list. */
export function encodeStartupMessage(
  msg: Partial<Fields<StartupMessage>> & Pick<StartupMessage, "parameters">,
): Buffer {
  return encodeOne((w) => writeStartupMessage(w, msg));
}
