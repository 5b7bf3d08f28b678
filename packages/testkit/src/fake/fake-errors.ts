import { PgError, SqlState } from "@geo/proto";

/**
 * Every error the fake backend originates, with the SQLSTATE and wording PostgreSQL 15 uses for the
 * same situation, so clients and the proxy see what a real server would send.
 */
export const fakeErrors = {
  expectedStartupPacket: () =>
    new PgError({
      code: SqlState.protocol_violation,
      severity: "FATAL",
      message: "expected a startup packet",
    }),
  unsupportedProtocol: (major: number, minor: number) =>
    new PgError({
      code: SqlState.feature_not_supported,
      severity: "FATAL",
      message: `unsupported frontend protocol ${major}.${minor}: server supports 3.0 to 3.0`,
    }),
  noUserName: () =>
    new PgError({
      code: SqlState.invalid_authorization_specification,
      severity: "FATAL",
      message: "no PostgreSQL user name specified in startup packet",
    }),
  expectedSaslResponse: () =>
    new PgError({
      code: SqlState.protocol_violation,
      severity: "FATAL",
      message: "expected a SASL response message",
    }),
  invalidSaslMechanism: () =>
    new PgError({
      code: SqlState.protocol_violation,
      severity: "FATAL",
      message: "client selected an invalid SASL authentication mechanism",
    }),
  passwordFailed: (user: string) =>
    new PgError({
      code: SqlState.invalid_password,
      severity: "FATAL",
      message: `password authentication failed for user "${user}"`,
    }),
  invalidFrontendMessage: (code: number) =>
    new PgError({
      code: SqlState.protocol_violation,
      severity: "FATAL",
      message: `invalid frontend message type ${code}`,
    }),
  functionCallUnsupported: () =>
    new PgError({
      code: SqlState.feature_not_supported,
      message: "the fake backend does not support FunctionCall",
      hint: "Use a SELECT of the function instead.",
    }),
  inFailedTransaction: () =>
    new PgError({
      code: SqlState.in_failed_sql_transaction,
      message: "current transaction is aborted, commands ignored until end of transaction block",
    }),
  scriptFailed: (cause: unknown) =>
    new PgError({
      code: SqlState.internal_error,
      message: `fake backend script failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      hint: "A rule's reply function or the handler threw; fix the test script.",
      cause,
    }),
  noAnswer: (statement: string) =>
    new PgError({
      code: SqlState.feature_not_supported,
      message: `the fake backend has no answer for: ${statement}`,
      hint: 'Add a rule or a handler to the FakeBackend for this statement, or start it with unknownStatements: "empty".',
    }),
  syntaxError: (statement: string) =>
    new PgError({ code: SqlState.syntax_error, message: `syntax error in "${statement}"` }),
  gidInUse: (gid: string) =>
    new PgError({
      code: SqlState.duplicate_object,
      message: `transaction identifier "${gid}" is already in use`,
    }),
  gidUnknown: (gid: string) =>
    new PgError({
      code: SqlState.undefined_object,
      message: `prepared transaction with identifier "${gid}" does not exist`,
    }),
  preparedInsideBlock: (verb: "COMMIT" | "ROLLBACK") =>
    new PgError({
      code: SqlState.active_sql_transaction,
      message: `${verb} PREPARED cannot run inside a transaction block`,
    }),
  unknownSetting: (name: string) =>
    new PgError({
      code: SqlState.undefined_object,
      message: `unrecognized configuration parameter "${name}"`,
    }),
  queryCanceled: () =>
    new PgError({ code: SqlState.query_canceled, message: "canceling statement due to user request" }),
  cannotEncode: (cause: unknown) =>
    new PgError({
      code: SqlState.feature_not_supported,
      message: cause instanceof Error ? cause.message : String(cause),
      hint: "Give the cell as a Buffer holding its binary form.",
    }),
  duplicateStatement: (name: string) =>
    new PgError({
      code: SqlState.duplicate_prepared_statement,
      message: `prepared statement "${name}" already exists`,
    }),
  unknownStatement: (name: string) =>
    new PgError({
      code: SqlState.invalid_sql_statement_name,
      message: `prepared statement "${name}" does not exist`,
    }),
  duplicatePortal: (name: string) =>
    new PgError({ code: SqlState.duplicate_cursor, message: `cursor "${name}" already exists` }),
  unknownPortal: (name: string) =>
    new PgError({ code: SqlState.invalid_cursor_name, message: `portal "${name}" does not exist` }),
  preparedTransactionsDisabled: () =>
    new PgError({
      code: SqlState.object_not_in_prerequisite_state,
      message: "prepared transactions are disabled",
      hint: "Set max_prepared_transactions to a nonzero value.",
    }),
  prepareRefused: (code: PgError["code"]) =>
    new PgError({ code, message: "PREPARE TRANSACTION refused by the fake backend" }),
  adminShutdown: () =>
    new PgError({
      code: SqlState.admin_shutdown,
      severity: "FATAL",
      message: "terminating connection due to administrator command",
    }),
} as const;
