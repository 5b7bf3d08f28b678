/**
 * Every error this package raises, from one catalog of named factories. Each carries a real
 * SQLSTATE, PostgreSQL's field names (message, hint, position) and, where it wraps one, a cause.
 */

export const SQL_ERROR_CODES = [
  "syntax-error",
  "unreadable-hint",
  "multiple-commands",
  "console-in-batch",
  "not-loaded",
  "analysis-failed",
] as const;
export type SqlErrorCode = (typeof SQL_ERROR_CODES)[number];

export class SqlAnalysisError extends Error {
  override readonly name = "SqlAnalysisError";
  /** Stable internal code. */
  readonly code: SqlErrorCode;
  /** Five-character SQLSTATE sent to the client. */
  readonly sqlstate: string;
  readonly hint: string | undefined;
  /** 1-based character position in the statement text, as PostgreSQL's ErrorResponse `P` field. */
  readonly position: number | undefined;

  constructor(
    code: SqlErrorCode,
    sqlstate: string,
    message: string,
    fields: { hint?: string; position?: number; cause?: unknown } = {},
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    this.sqlstate = sqlstate;
    this.hint = fields.hint;
    this.position = fields.position;
  }
}

/** PostgreSQL's parser rejected the text; message and position are PostgreSQL's own. */
export function syntaxError(
  message: string,
  position: number | undefined,
  cause?: unknown,
): SqlAnalysisError {
  return new SqlAnalysisError("syntax-error", "42601", message, {
    ...(position === undefined ? {} : { position }),
    ...(cause === undefined ? {} : { cause }),
  });
}

export const VALID_HINT_FORMS = "/* geo: key=<value> */, /* geo: region=<region id> */ or /* geo: primary */";

/** A leading `geo:` comment that does not say one of the valid things. */
export function unreadableHint(comment: string, problem: string): SqlAnalysisError {
  return new SqlAnalysisError(
    "unreadable-hint",
    "42601",
    `cannot read geo hint ${JSON.stringify(comment)}: ${problem}`,
    {
      hint: `write the hint as ${VALID_HINT_FORMS}; several may be combined, separated by spaces`,
    },
  );
}

/** The extended protocol's Parse accepts one statement, as in PostgreSQL. */
export function multipleCommands(): SqlAnalysisError {
  return new SqlAnalysisError(
    "multiple-commands",
    "42601",
    "cannot insert multiple commands into a prepared statement",
    {
      hint: "send each statement in its own Parse, or use the simple query protocol for a batch",
    },
  );
}

/**
 * Console commands that change the proxy's state run alone: no implicit transaction can undo them.
 * `command` is the console reader's name for it (`relocate`), written back as its words.
 */
export function consoleCommandInBatch(command: string): SqlAnalysisError {
  const words = command.toUpperCase().replace(/-/g, " ");
  return new SqlAnalysisError(
    "console-in-batch",
    "0A000",
    `${words} cannot run inside a multi-statement query`,
    {
      hint: `send ${words} as a query of its own; console commands that only report may share a query with other statements`,
    },
  );
}

/** The WebAssembly parser must be loaded (await Analyzer.create() or initSql()) before analysing. */
export function parserNotLoaded(): SqlAnalysisError {
  return new SqlAnalysisError("not-loaded", "XX000", "the SQL parser is not loaded", {
    hint: "await initSql() (or create the analyzer with await Analyzer.create(...)) before analysing",
  });
}

/** The analyser itself failed on a statement PostgreSQL accepted: an error for this statement only. */
export function analysisFailed(cause: unknown): SqlAnalysisError {
  return new SqlAnalysisError("analysis-failed", "XX000", "geoproxy could not analyse this statement", {
    hint: "send it to one region with /* geo: region=<id> */, and report the statement",
    cause,
  });
}
