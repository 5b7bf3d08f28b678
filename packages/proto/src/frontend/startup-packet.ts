import { StartupRequestCode } from "../codes.js";
import { FaultReason, type ProtocolFault, protocolFault } from "../fault.js";
import { type CancelRequest, decodeCancelRequest } from "./cancel-request.js";
import { decodeGSSENCRequest, type GSSENCRequest } from "./gssenc-request.js";
import { decodeSSLRequest, type SSLRequest } from "./ssl-request.js";
import { decodeStartupMessage, type StartupMessage } from "./startup-message.js";

/** Anything a client may send before its first typed message. */
export type StartupPacket = StartupMessage | SSLRequest | GSSENCRequest | CancelRequest;

/** Decodes the payload of a startup-phase frame by its request code. */
export function decodeStartupPacket(payload: Buffer): StartupPacket | ProtocolFault {
  if (payload.length < 4) {
    return protocolFault(FaultReason.truncated, "startup packet: body ends before its request code");
  }
  switch (payload.readInt32BE(0)) {
    case StartupRequestCode.SSLRequest:
      return decodeSSLRequest(payload);
    case StartupRequestCode.GSSENCRequest:
      return decodeGSSENCRequest(payload);
    case StartupRequestCode.CancelRequest:
      return decodeCancelRequest(payload);
    default:
      return decodeStartupMessage(payload);
  }
}
