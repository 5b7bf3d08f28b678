import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A run-time parameter the client is told about (server_version, TimeZone, client_encoding...). */
export interface ParameterStatus {
  readonly type: "ParameterStatus";
  readonly name: string;
  readonly value: string;
}

export function decodeParameterStatus(payload: Buffer): ParameterStatus | ProtocolFault {
  const r = new Reader(payload, "ParameterStatus");
  const name = r.cstring("name");
  const value = r.cstring("value");
  return r.result({ type: "ParameterStatus", name, value });
}

export function writeParameterStatus(w: Writer, msg: Fields<ParameterStatus>): Writer {
  return w.begin(BackendCode.ParameterStatus).cstring(msg.name).cstring(msg.value).end();
}

export function encodeParameterStatus(msg: Fields<ParameterStatus>): Buffer {
  return encodeOne((w) => writeParameterStatus(w, msg));
}
