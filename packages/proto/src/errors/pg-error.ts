import type { ErrorFields } from "./error-fields.js";
import { SqlState, type SqlStateCode } from "./sqlstate.js";

/** Severities as sent in the non-localized 'V' field. */
export const Severity = {
  ERROR: "ERROR",
  FATAL: "FATAL",
  PANIC: "PANIC",
  WARNING: "WARNING",
  NOTICE: "NOTICE",
  DEBUG: "DEBUG",
  INFO: "INFO",
  LOG: "LOG",
} as const;
export type Severity = (typeof Severity)[keyof typeof Severity];

function isSeverity(value: string): value is Severity {
  return Object.hasOwn(Severity, value);
}

const knownCodes = new Set<string>(Object.values(SqlState));

/** True when `code` is one of the SQLSTATEs PostgreSQL defines. */
export function isSqlStateCode(code: string): code is SqlStateCode {
  return knownCodes.has(code);
}

/** What a PgError is built from: a code and a message are required, everything else optional. */
export interface PgErrorInit {
  readonly code: SqlStateCode;
  readonly message: string;
  readonly severity?: Severity | undefined;
  readonly localizedSeverity?: string | undefined;
  readonly detail?: string | undefined;
  readonly hint?: string | undefined;
  readonly position?: number | undefined;
  readonly internalPosition?: number | undefined;
  readonly internalQuery?: string | undefined;
  readonly where?: string | undefined;
  readonly schema?: string | undefined;
  readonly table?: string | undefined;
  readonly column?: string | undefined;
  readonly dataType?: string | undefined;
  readonly constraint?: string | undefined;
  readonly file?: string | undefined;
  readonly line?: number | undefined;
  readonly routine?: string | undefined;
  readonly cause?: unknown;
}

/**
 * A PostgreSQL error or notice with every field the server can send, `hint` included. Built by the
 * proxy for errors it originates, or from a server's ErrorResponse with `PgError.fromFields`.
 *
 * `code` is typed as a known SQLSTATE; a code from a newer server that this table does not list is
 * carried through unchanged.
 *
 * @example
 * ```ts
 * const err = new PgError({
 *   code: SqlState.feature_not_supported,
 *   message: "join across regions on a non-key column",
 *   hint: "Join on the partition key, or pin both tables to one region.",
 * });
 * socket.write(encodeErrorResponse(err));
 * ```
 */
export class PgError extends Error {
  override readonly name = "PgError";
  readonly code: SqlStateCode;
  readonly severity: Severity;
  /** The 'S' field when it differs from the non-localized severity (a translated server). */
  readonly localizedSeverity: string | undefined;
  readonly detail: string | undefined;
  readonly hint: string | undefined;
  readonly position: number | undefined;
  readonly internalPosition: number | undefined;
  readonly internalQuery: string | undefined;
  readonly where: string | undefined;
  readonly schema: string | undefined;
  readonly table: string | undefined;
  readonly column: string | undefined;
  readonly dataType: string | undefined;
  readonly constraint: string | undefined;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly routine: string | undefined;

  constructor(init: PgErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.severity = init.severity ?? Severity.ERROR;
    this.localizedSeverity = init.localizedSeverity;
    this.detail = init.detail;
    this.hint = init.hint;
    this.position = init.position;
    this.internalPosition = init.internalPosition;
    this.internalQuery = init.internalQuery;
    this.where = init.where;
    this.schema = init.schema;
    this.table = init.table;
    this.column = init.column;
    this.dataType = init.dataType;
    this.constraint = init.constraint;
    this.file = init.file;
    this.line = init.line;
    this.routine = init.routine;
  }

  /** FATAL and PANIC end the session. */
  get isFatal(): boolean {
    return this.severity === Severity.FATAL || this.severity === Severity.PANIC;
  }

  /**
   * Builds an error from ErrorResponse/NoticeResponse fields. A missing code becomes XX000
   * (internal_error), a missing severity ERROR; numeric fields that are not numbers are dropped.
   */
  static fromFields(fields: ErrorFields): PgError {
    const wireSeverity = fields.severityNonLocalized ?? fields.severity ?? Severity.ERROR;
    const severity = isSeverity(wireSeverity) ? wireSeverity : Severity.ERROR;
    const init: { -readonly [K in keyof PgErrorInit]: PgErrorInit[K] } = {
      code: (fields.code ?? SqlState.internal_error) as SqlStateCode,
      message: fields.message ?? "",
      severity,
    };
    if (fields.severity !== undefined && fields.severity !== severity)
      init.localizedSeverity = fields.severity;
    copyText(fields, init, "detail");
    copyText(fields, init, "hint");
    copyText(fields, init, "internalQuery");
    copyText(fields, init, "where");
    copyText(fields, init, "schema");
    copyText(fields, init, "table");
    copyText(fields, init, "column");
    copyText(fields, init, "dataType");
    copyText(fields, init, "constraint");
    copyText(fields, init, "file");
    copyText(fields, init, "routine");
    copyNumber(fields, init, "position");
    copyNumber(fields, init, "internalPosition");
    copyNumber(fields, init, "line");
    return new PgError(init);
  }

  /** The fields to put on the wire, in the order PostgreSQL sends them. */
  toFields(): ErrorFields {
    const out: { -readonly [K in keyof ErrorFields]: ErrorFields[K] } = {
      severity: this.localizedSeverity ?? this.severity,
      severityNonLocalized: this.severity,
      code: this.code,
      message: this.message,
    };
    if (this.detail !== undefined) out.detail = this.detail;
    if (this.hint !== undefined) out.hint = this.hint;
    if (this.position !== undefined) out.position = String(this.position);
    if (this.internalPosition !== undefined) out.internalPosition = String(this.internalPosition);
    if (this.internalQuery !== undefined) out.internalQuery = this.internalQuery;
    if (this.where !== undefined) out.where = this.where;
    if (this.schema !== undefined) out.schema = this.schema;
    if (this.table !== undefined) out.table = this.table;
    if (this.column !== undefined) out.column = this.column;
    if (this.dataType !== undefined) out.dataType = this.dataType;
    if (this.constraint !== undefined) out.constraint = this.constraint;
    if (this.file !== undefined) out.file = this.file;
    if (this.line !== undefined) out.line = String(this.line);
    if (this.routine !== undefined) out.routine = this.routine;
    return out;
  }
}

type TextField =
  | "detail"
  | "hint"
  | "internalQuery"
  | "where"
  | "schema"
  | "table"
  | "column"
  | "dataType"
  | "constraint"
  | "file"
  | "routine";
type NumberField = "position" | "internalPosition" | "line";

function copyText(
  fields: ErrorFields,
  init: { -readonly [K in keyof PgErrorInit]: PgErrorInit[K] },
  name: TextField,
): void {
  const value = fields[name];
  if (value !== undefined) init[name] = value;
}

function copyNumber(
  fields: ErrorFields,
  init: { -readonly [K in keyof PgErrorInit]: PgErrorInit[K] },
  name: NumberField,
): void {
  const value = fields[name];
  if (value === undefined || !/^-?\d+$/.test(value)) return;
  init[name] = Number(value);
}
