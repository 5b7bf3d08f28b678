/**
 * Message code bytes, one table per direction: the same letter means different messages ('D' is
 * Describe from a client and DataRow from a server; 'E', 'C', 'S' and 'H' differ too).
 */
export const FrontendCode = {
  Bind: 0x42, // 'B'
  Close: 0x43, // 'C'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyFail: 0x66, // 'f'
  Describe: 0x44, // 'D'
  Execute: 0x45, // 'E'
  Flush: 0x48, // 'H'
  FunctionCall: 0x46, // 'F'
  /** PasswordMessage, SASLInitialResponse, SASLResponse and GSSResponse share 'p'. */
  AuthenticationResponse: 0x70, // 'p'
  Parse: 0x50, // 'P'
  Query: 0x51, // 'Q'
  Sync: 0x53, // 'S'
  Terminate: 0x58, // 'X'
} as const;
export type FrontendCode = (typeof FrontendCode)[keyof typeof FrontendCode];

export const BackendCode = {
  Authentication: 0x52, // 'R'
  BackendKeyData: 0x4b, // 'K'
  BindComplete: 0x32, // '2'
  CloseComplete: 0x33, // '3'
  CommandComplete: 0x43, // 'C'
  CopyBothResponse: 0x57, // 'W'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyInResponse: 0x47, // 'G'
  CopyOutResponse: 0x48, // 'H'
  DataRow: 0x44, // 'D'
  EmptyQueryResponse: 0x49, // 'I'
  ErrorResponse: 0x45, // 'E'
  FunctionCallResponse: 0x56, // 'V'
  NegotiateProtocolVersion: 0x76, // 'v'
  NoData: 0x6e, // 'n'
  NoticeResponse: 0x4e, // 'N'
  NotificationResponse: 0x41, // 'A'
  ParameterDescription: 0x74, // 't'
  ParameterStatus: 0x53, // 'S'
  ParseComplete: 0x31, // '1'
  PortalSuspended: 0x73, // 's'
  ReadyForQuery: 0x5a, // 'Z'
  RowDescription: 0x54, // 'T'
} as const;
export type BackendCode = (typeof BackendCode)[keyof typeof BackendCode];

/**
 * The int32 after the length of a startup-phase packet. A StartupMessage carries the protocol
 * version there (major << 16 | minor); the other requests use version numbers no server will ever
 * speak (1234.5678 and up).
 */
export const StartupRequestCode = {
  CancelRequest: 80877102,
  SSLRequest: 80877103,
  GSSENCRequest: 80877104,
} as const;
export type StartupRequestCode = (typeof StartupRequestCode)[keyof typeof StartupRequestCode];

/** Frames read in the startup phase carry this code, as the packet itself has no code byte. */
export const STARTUP_FRAME_CODE = 0;

/** Protocol 3.0 and 3.2 (3.1 was never used), as the int32 a StartupMessage carries. */
export const ProtocolVersion = {
  v3_0: 3 << 16,
  v3_2: (3 << 16) | 2,
} as const;

const frontendNames = new Map<number, string>(
  Object.entries(FrontendCode).map(([name, code]) => [code, name]),
);
const backendNames = new Map<number, string>(Object.entries(BackendCode).map(([name, code]) => [code, name]));

/** A readable name for a frontend code, for logs and faults. */
export function frontendCodeName(code: number): string {
  if (code === STARTUP_FRAME_CODE) return "StartupPacket";
  return frontendNames.get(code) ?? `unknown(${codeText(code)})`;
}

/** A readable name for a backend code, for logs and faults. */
export function backendCodeName(code: number): string {
  return backendNames.get(code) ?? `unknown(${codeText(code)})`;
}

function codeText(code: number): string {
  return code >= 0x20 && code < 0x7f ? `'${String.fromCharCode(code)}'` : `0x${code.toString(16)}`;
}
