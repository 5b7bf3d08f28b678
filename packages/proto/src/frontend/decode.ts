import { FrontendCode } from "../codes.js";
import { type CopyData, decodeCopyData } from "../common/copy-data.js";
import { type CopyDone, decodeCopyDone } from "../common/copy-done.js";
import { FaultReason, type ProtocolFault, protocolFault } from "../fault.js";
import type { Frame } from "../framer.js";
import { type Bind, decodeBind } from "./bind.js";
import { type Close, decodeClose } from "./close.js";
import { type CopyFail, decodeCopyFail } from "./copy-fail.js";
import { type Describe, decodeDescribe } from "./describe.js";
import { decodeExecute, type Execute } from "./execute.js";
import { decodeFlush, type Flush } from "./flush.js";
import { decodeFunctionCall, type FunctionCall } from "./function-call.js";
import { decodeParse, type Parse } from "./parse.js";
import { decodeQuery, type Query } from "./query.js";
import { decodeSync, type Sync } from "./sync.js";
import { decodeTerminate, type Terminate } from "./terminate.js";

/**
 * A 'p' message before it is known which kind it is: PasswordMessage, SASLInitialResponse,
 * SASLResponse or GSSResponse depend on the authentication exchange. Decode `payload` with the
 * matching decoder once the exchange state says which.
 */
export interface AuthenticationResponse {
  readonly type: "AuthenticationResponse";
  readonly payload: Buffer;
}

/** Every typed message a client can send. */
export type FrontendMessage =
  | Bind
  | Close
  | CopyData
  | CopyDone
  | CopyFail
  | Describe
  | Execute
  | Flush
  | FunctionCall
  | AuthenticationResponse
  | Parse
  | Query
  | Sync
  | Terminate;

/** Decodes a typed frame from a client (not a startup packet: see `decodeStartupPacket`). */
export function decodeFrontendMessage(frame: Frame): FrontendMessage | ProtocolFault {
  const payload = frame.payload;
  switch (frame.code) {
    case FrontendCode.Bind:
      return decodeBind(payload);
    case FrontendCode.Close:
      return decodeClose(payload);
    case FrontendCode.CopyData:
      return decodeCopyData(payload);
    case FrontendCode.CopyDone:
      return decodeCopyDone(payload);
    case FrontendCode.CopyFail:
      return decodeCopyFail(payload);
    case FrontendCode.Describe:
      return decodeDescribe(payload);
    case FrontendCode.Execute:
      return decodeExecute(payload);
    case FrontendCode.Flush:
      return decodeFlush(payload);
    case FrontendCode.FunctionCall:
      return decodeFunctionCall(payload);
    case FrontendCode.AuthenticationResponse:
      return { type: "AuthenticationResponse", payload };
    case FrontendCode.Parse:
      return decodeParse(payload);
    case FrontendCode.Query:
      return decodeQuery(payload);
    case FrontendCode.Sync:
      return decodeSync(payload);
    case FrontendCode.Terminate:
      return decodeTerminate(payload);
    default:
      return protocolFault(
        FaultReason.unknownCode,
        `unknown frontend message code 0x${frame.code.toString(16)}`,
      );
  }
}
