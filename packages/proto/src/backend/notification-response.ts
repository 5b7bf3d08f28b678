import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** A NOTIFY delivered to a session that LISTENs on `channel`. */
export interface NotificationResponse {
  readonly type: "NotificationResponse";
  /** The notifying backend's process id. */
  readonly processId: number;
  readonly channel: string;
  readonly payload: string;
}

export function decodeNotificationResponse(payload: Buffer): NotificationResponse | ProtocolFault {
  const r = new Reader(payload, "NotificationResponse");
  const processId = r.i32("process id");
  const channel = r.cstring("channel");
  const text = r.cstring("payload");
  return r.result({ type: "NotificationResponse", processId, channel, payload: text });
}

export function writeNotificationResponse(w: Writer, msg: Fields<NotificationResponse>): Writer {
  return w
    .begin(BackendCode.NotificationResponse)
    .i32(msg.processId)
    .cstring(msg.channel)
    .cstring(msg.payload)
    .end();
}

export function encodeNotificationResponse(msg: Fields<NotificationResponse>): Buffer {
  return encodeOne((w) => writeNotificationResponse(w, msg));
}
