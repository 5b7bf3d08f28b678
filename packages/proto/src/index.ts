/**
 * @geo/proto: the PostgreSQL frontend/backend protocol 3.0 (and the 3.2 cancel key) as pure
 * functions over bytes: framing, every message in both directions, zero-copy peeks for routing,
 * PgError with the SQLSTATE table, and SCRAM-SHA-256 / MD5 authentication math.
 */

export { assertNever } from "./assert-never.js";
// Authentication
export { md5FromStored, md5PasswordHash, md5StoredPassword, verifyMd5Password } from "./auth/md5.js";
export { saslPrep } from "./auth/saslprep.js";
export {
  DEFAULT_SCRAM_ITERATIONS,
  deriveScramKeys,
  formatScramVerifier,
  isScramFailure,
  makeScramVerifier,
  parseScramVerifier,
  SCRAM_SHA_256,
  ScramClient,
  type ScramClientOptions,
  type ScramCredentials,
  type ScramFailure,
  ScramFailureReason,
  type ScramKeys,
  ScramServer,
  type ScramServerFinal,
  type ScramServerOptions,
  type ScramServerStep,
  type ScramVerifier,
} from "./auth/scram.js";
// Backend messages
export {
  type Authentication,
  AuthenticationKind,
  decodeAuthentication,
  encodeAuthentication,
  writeAuthentication,
} from "./backend/authentication.js";
export {
  type BackendKeyData,
  decodeBackendKeyData,
  encodeBackendKeyData,
  writeBackendKeyData,
} from "./backend/backend-key-data.js";
export {
  type BindComplete,
  decodeBindComplete,
  encodeBindComplete,
  writeBindComplete,
} from "./backend/bind-complete.js";
export {
  type CloseComplete,
  decodeCloseComplete,
  encodeCloseComplete,
  writeCloseComplete,
} from "./backend/close-complete.js";
export {
  type CommandComplete,
  commandRowCount,
  commandTag,
  decodeCommandComplete,
  encodeCommandComplete,
  writeCommandComplete,
} from "./backend/command-complete.js";
export {
  type CopyBothResponse,
  decodeCopyBothResponse,
  encodeCopyBothResponse,
  writeCopyBothResponse,
} from "./backend/copy-both-response.js";
export {
  type CopyInResponse,
  decodeCopyInResponse,
  encodeCopyInResponse,
  writeCopyInResponse,
} from "./backend/copy-in-response.js";
export {
  type CopyOutResponse,
  decodeCopyOutResponse,
  encodeCopyOutResponse,
  writeCopyOutResponse,
} from "./backend/copy-out-response.js";
export {
  type DataRow,
  DataRowCursor,
  decodeDataRow,
  encodeDataRow,
  writeDataRow,
} from "./backend/data-row.js";
export { type BackendMessage, decodeBackendMessage } from "./backend/decode.js";
export {
  decodeEmptyQueryResponse,
  type EmptyQueryResponse,
  encodeEmptyQueryResponse,
  writeEmptyQueryResponse,
} from "./backend/empty-query-response.js";
export {
  decodeErrorResponse,
  type ErrorResponse,
  encodeErrorResponse,
  errorField,
  writeErrorResponse,
} from "./backend/error-response.js";
export {
  decodeFunctionCallResponse,
  encodeFunctionCallResponse,
  type FunctionCallResponse,
  writeFunctionCallResponse,
} from "./backend/function-call-response.js";
export {
  decodeNegotiateProtocolVersion,
  encodeNegotiateProtocolVersion,
  type NegotiateProtocolVersion,
  writeNegotiateProtocolVersion,
} from "./backend/negotiate-protocol-version.js";
export { decodeNoData, encodeNoData, type NoData, writeNoData } from "./backend/no-data.js";
export {
  decodeNoticeResponse,
  encodeNoticeResponse,
  type NoticeResponse,
  writeNoticeResponse,
} from "./backend/notice-response.js";
export {
  decodeNotificationResponse,
  encodeNotificationResponse,
  type NotificationResponse,
  writeNotificationResponse,
} from "./backend/notification-response.js";
export {
  decodeParameterDescription,
  encodeParameterDescription,
  type ParameterDescription,
  writeParameterDescription,
} from "./backend/parameter-description.js";
export {
  decodeParameterStatus,
  encodeParameterStatus,
  type ParameterStatus,
  writeParameterStatus,
} from "./backend/parameter-status.js";
export {
  decodeParseComplete,
  encodeParseComplete,
  type ParseComplete,
  writeParseComplete,
} from "./backend/parse-complete.js";
export {
  decodePortalSuspended,
  encodePortalSuspended,
  type PortalSuspended,
  writePortalSuspended,
} from "./backend/portal-suspended.js";
export {
  decodeReadyForQuery,
  encodeReadyForQuery,
  type ReadyForQuery,
  readyForQueryStatus,
  type TransactionStatus,
  writeReadyForQuery,
} from "./backend/ready-for-query.js";
export {
  decodeRowDescription,
  encodeRowDescription,
  type FieldDescription,
  type RowDescription,
  writeRowDescription,
} from "./backend/row-description.js";
// Framing and primitives
export {
  BackendCode,
  backendCodeName,
  FrontendCode,
  frontendCodeName,
  ProtocolVersion,
  STARTUP_FRAME_CODE,
  StartupRequestCode,
} from "./codes.js";
// Both directions
export { type CopyData, decodeCopyData, encodeCopyData, writeCopyData } from "./common/copy-data.js";
export { type CopyDone, decodeCopyDone, encodeCopyDone, writeCopyDone } from "./common/copy-done.js";
export { Messages } from "./constants.js";
export { PROTO_ERRORS } from "./errors/error-catalog.js";
// Errors
export { ErrorFieldCode, type ErrorFieldName, type ErrorFields } from "./errors/error-fields.js";
export { isSqlStateCode, PgError, type PgErrorInit, Severity } from "./errors/pg-error.js";
export { protocolViolation } from "./errors/protocol-violation.js";
export { SqlState, SqlStateClass, type SqlStateCode, type SqlStateName } from "./errors/sqlstate.js";
export { FaultReason, isProtocolFault, type ProtocolFault, protocolFault } from "./fault.js";
export {
  BackendFramer,
  type BackendFramerOptions,
  copyFrame,
  DEFAULT_MAX_AUTH_LENGTH,
  DEFAULT_MAX_MESSAGE_LENGTH,
  DEFAULT_MAX_STARTUP_LENGTH,
  type EncryptionResponse,
  type Frame,
  FrontendFramer,
  type FrontendFramerOptions,
  type FrontendPhase,
} from "./framer.js";
// Frontend messages
export { type Bind, BindView, decodeBind, encodeBind, writeBind } from "./frontend/bind.js";
export {
  type CancelRequest,
  decodeCancelRequest,
  encodeCancelRequest,
  MAX_CANCEL_KEY_LENGTH,
  MIN_CANCEL_KEY_LENGTH,
  writeCancelRequest,
} from "./frontend/cancel-request.js";
export { type Close, decodeClose, encodeClose, writeClose } from "./frontend/close.js";
export { type CopyFail, decodeCopyFail, encodeCopyFail, writeCopyFail } from "./frontend/copy-fail.js";
export {
  type AuthenticationResponse,
  decodeFrontendMessage,
  type FrontendMessage,
} from "./frontend/decode.js";
export {
  type Describe,
  decodeDescribe,
  encodeDescribe,
  type TargetKind,
  writeDescribe,
} from "./frontend/describe.js";
export { decodeExecute, type Execute, encodeExecute, writeExecute } from "./frontend/execute.js";
export { decodeFlush, encodeFlush, type Flush, writeFlush } from "./frontend/flush.js";
export {
  decodeFunctionCall,
  encodeFunctionCall,
  type FunctionCall,
  writeFunctionCall,
} from "./frontend/function-call.js";
export {
  decodeGSSResponse,
  encodeGSSResponse,
  type GSSResponse,
  writeGSSResponse,
} from "./frontend/gss-response.js";
export { decodeGSSENCRequest, encodeGSSENCRequest, type GSSENCRequest } from "./frontend/gssenc-request.js";
export { decodeParse, encodeParse, type Parse, writeParse } from "./frontend/parse.js";
export {
  decodePasswordMessage,
  encodePasswordMessage,
  type PasswordMessage,
  writePasswordMessage,
} from "./frontend/password-message.js";
export { decodeQuery, encodeQuery, type Query, writeQuery } from "./frontend/query.js";
export {
  decodeSASLInitialResponse,
  encodeSASLInitialResponse,
  type SASLInitialResponse,
  writeSASLInitialResponse,
} from "./frontend/sasl-initial-response.js";
export {
  decodeSASLResponse,
  encodeSASLResponse,
  type SASLResponse,
  writeSASLResponse,
} from "./frontend/sasl-response.js";
export { decodeSSLRequest, encodeSSLRequest, type SSLRequest } from "./frontend/ssl-request.js";
export {
  decodeStartupMessage,
  encodeStartupMessage,
  protocolMajor,
  protocolMinor,
  type StartupMessage,
  writeStartupMessage,
} from "./frontend/startup-message.js";
export { decodeStartupPacket, type StartupPacket } from "./frontend/startup-packet.js";
export { decodeSync, encodeSync, type Sync, writeSync } from "./frontend/sync.js";
export { decodeTerminate, encodeTerminate, type Terminate, writeTerminate } from "./frontend/terminate.js";
export type { Fields, FormatCode } from "./message.js";
export { Reader } from "./reader.js";
export { Writer } from "./writer.js";
