import { BackendCode } from "../codes.js";
import { type CopyData, decodeCopyData } from "../common/copy-data.js";
import { type CopyDone, decodeCopyDone } from "../common/copy-done.js";
import { FaultReason, type ProtocolFault, protocolFault } from "../fault.js";
import type { Frame } from "../framer.js";
import { type Authentication, decodeAuthentication } from "./authentication.js";
import { type BackendKeyData, decodeBackendKeyData } from "./backend-key-data.js";
import { type BindComplete, decodeBindComplete } from "./bind-complete.js";
import { type CloseComplete, decodeCloseComplete } from "./close-complete.js";
import { type CommandComplete, decodeCommandComplete } from "./command-complete.js";
import { type CopyBothResponse, decodeCopyBothResponse } from "./copy-both-response.js";
import { type CopyInResponse, decodeCopyInResponse } from "./copy-in-response.js";
import { type CopyOutResponse, decodeCopyOutResponse } from "./copy-out-response.js";
import { type DataRow, decodeDataRow } from "./data-row.js";
import { decodeEmptyQueryResponse, type EmptyQueryResponse } from "./empty-query-response.js";
import { decodeErrorResponse, type ErrorResponse } from "./error-response.js";
import { decodeFunctionCallResponse, type FunctionCallResponse } from "./function-call-response.js";
import {
  decodeNegotiateProtocolVersion,
  type NegotiateProtocolVersion,
} from "./negotiate-protocol-version.js";
import { decodeNoData, type NoData } from "./no-data.js";
import { decodeNoticeResponse, type NoticeResponse } from "./notice-response.js";
import { decodeNotificationResponse, type NotificationResponse } from "./notification-response.js";
import { decodeParameterDescription, type ParameterDescription } from "./parameter-description.js";
import { decodeParameterStatus, type ParameterStatus } from "./parameter-status.js";
import { decodeParseComplete, type ParseComplete } from "./parse-complete.js";
import { decodePortalSuspended, type PortalSuspended } from "./portal-suspended.js";
import { decodeReadyForQuery, type ReadyForQuery } from "./ready-for-query.js";
import { decodeRowDescription, type RowDescription } from "./row-description.js";

/** Every message a server can send. */
export type BackendMessage =
  | Authentication
  | BackendKeyData
  | BindComplete
  | CloseComplete
  | CommandComplete
  | CopyBothResponse
  | CopyData
  | CopyDone
  | CopyInResponse
  | CopyOutResponse
  | DataRow
  | EmptyQueryResponse
  | ErrorResponse
  | FunctionCallResponse
  | NegotiateProtocolVersion
  | NoData
  | NoticeResponse
  | NotificationResponse
  | ParameterDescription
  | ParameterStatus
  | ParseComplete
  | PortalSuspended
  | ReadyForQuery
  | RowDescription;

/** Decodes a frame from a server by its code. */
export function decodeBackendMessage(frame: Frame): BackendMessage | ProtocolFault {
  const payload = frame.payload;
  switch (frame.code) {
    case BackendCode.Authentication:
      return decodeAuthentication(payload);
    case BackendCode.BackendKeyData:
      return decodeBackendKeyData(payload);
    case BackendCode.BindComplete:
      return decodeBindComplete(payload);
    case BackendCode.CloseComplete:
      return decodeCloseComplete(payload);
    case BackendCode.CommandComplete:
      return decodeCommandComplete(payload);
    case BackendCode.CopyBothResponse:
      return decodeCopyBothResponse(payload);
    case BackendCode.CopyData:
      return decodeCopyData(payload);
    case BackendCode.CopyDone:
      return decodeCopyDone(payload);
    case BackendCode.CopyInResponse:
      return decodeCopyInResponse(payload);
    case BackendCode.CopyOutResponse:
      return decodeCopyOutResponse(payload);
    case BackendCode.DataRow:
      return decodeDataRow(payload);
    case BackendCode.EmptyQueryResponse:
      return decodeEmptyQueryResponse(payload);
    case BackendCode.ErrorResponse:
      return decodeErrorResponse(payload);
    case BackendCode.FunctionCallResponse:
      return decodeFunctionCallResponse(payload);
    case BackendCode.NegotiateProtocolVersion:
      return decodeNegotiateProtocolVersion(payload);
    case BackendCode.NoData:
      return decodeNoData(payload);
    case BackendCode.NoticeResponse:
      return decodeNoticeResponse(payload);
    case BackendCode.NotificationResponse:
      return decodeNotificationResponse(payload);
    case BackendCode.ParameterDescription:
      return decodeParameterDescription(payload);
    case BackendCode.ParameterStatus:
      return decodeParameterStatus(payload);
    case BackendCode.ParseComplete:
      return decodeParseComplete(payload);
    case BackendCode.PortalSuspended:
      return decodePortalSuspended(payload);
    case BackendCode.ReadyForQuery:
      return decodeReadyForQuery(payload);
    case BackendCode.RowDescription:
      return decodeRowDescription(payload);
    default:
      return protocolFault(
        FaultReason.unknownCode,
        `unknown backend message code 0x${frame.code.toString(16)}`,
      );
  }
}
