export const CONFIG_ERROR_CODES = [
  "unreadable",
  "syntax",
  "unknown_field",
  "missing_field",
  "wrong_type",
  "invalid_value",
  "duplicate",
  "not_available",
] as const;
export type ConfigErrorCode = (typeof CONFIG_ERROR_CODES)[number];

export interface ConfigErrorFields {
  readonly code: ConfigErrorCode;
  readonly file: string;
  /** 1-based line of the offending key, when it can be found in the text. */
  readonly line?: number;
  /** Dotted path of the field, e.g. `topology.regions[1].primary.port`. */
  readonly path?: string;
  /** What would have been accepted. */
  readonly choices?: readonly string[];
  readonly detail: string;
  readonly cause?: unknown;
}

/**
 * The one error a configuration (TOML or directory TSV) produces. Its message reads
 * `file:line: path: detail (valid: a, b)` so an operator can jump straight to the line.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly code: ConfigErrorCode;
  readonly file: string;
  readonly line: number | undefined;
  readonly path: string | undefined;
  readonly choices: readonly string[] | undefined;
  readonly detail: string;

  constructor(fields: ConfigErrorFields) {
    super(formatConfigError(fields), fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.file = fields.file;
    this.line = fields.line;
    this.path = fields.path;
    this.choices = fields.choices;
    this.detail = fields.detail;
  }
}

function formatConfigError(fields: ConfigErrorFields): string {
  const where = fields.line === undefined ? fields.file : `${fields.file}:${fields.line}`;
  const path = fields.path === undefined ? "" : ` ${fields.path}:`;
  const choices =
    fields.choices === undefined || fields.choices.length === 0
      ? ""
      : ` (valid: ${fields.choices.join(", ")})`;
  return `${where}:${path} ${fields.detail}${choices}`;
}
