/**
 * Every error @geo/client originates. `code` is stable (switch on it, never on the message);
 * `variable` names the environment variable that was read, exactly as it is spelled in the
 * environment (prefixed or bare), so an operator looks where the value really came from.
 */
export const CLIENT_ERROR_CODES = [
  "primary_missing",
  "primary_conflict",
  "primary_part_missing",
  "replica_conflict",
  "replica_host_without_parts",
  "invalid_url",
  "invalid_port",
  "invalid_option",
  "primary_unreachable",
  "migration_invalid",
  "migration_gap",
  "migration_failed",
] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

export interface ClientErrorFields {
  readonly code: ClientErrorCode;
  readonly message: string;
  readonly hint: string;
  /** The environment variable(s) involved, spelled as found (or as searched, when none was). */
  readonly variables?: readonly string[];
  /** SQLSTATE for errors that describe a server or connection outcome. */
  readonly sqlState?: string;
  readonly cause?: unknown;
}

export class ClientError extends Error {
  override readonly name = "ClientError";
  readonly code: ClientErrorCode;
  readonly hint: string;
  readonly variables: readonly string[];
  readonly sqlState: string | undefined;

  constructor(fields: ClientErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.hint = fields.hint;
    this.variables = fields.variables ?? [];
    this.sqlState = fields.sqlState;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function primaryMissing(urlVariable: string, hostVariable: string): ClientError {
  return new ClientError({
    code: "primary_missing",
    message: `no primary database configured: neither ${urlVariable} nor ${hostVariable} is set`,
    hint: `set ${urlVariable} to a postgres:// URL, or ${hostVariable} with its user and database variables`,
    variables: [urlVariable, hostVariable],
  });
}

export function primaryConflict(urlVariable: string, hostVariable: string): ClientError {
  return new ClientError({
    code: "primary_conflict",
    message: `both ${urlVariable} and ${hostVariable} are set; the primary would come from two places`,
    hint: `unset one of ${urlVariable} and ${hostVariable}`,
    variables: [urlVariable, hostVariable],
  });
}

export function primaryPartMissing(hostVariable: string, missingVariable: string): ClientError {
  return new ClientError({
    code: "primary_part_missing",
    message: `${hostVariable} is set but ${missingVariable} is not`,
    hint: `set ${missingVariable}, or give the whole primary as a URL instead`,
    variables: [hostVariable, missingVariable],
  });
}

export function replicaConflict(urlVariable: string, hostVariable: string): ClientError {
  return new ClientError({
    code: "replica_conflict",
    message: `both ${urlVariable} and ${hostVariable} are set; the replica would come from two places`,
    hint: `unset one of ${urlVariable} and ${hostVariable}`,
    variables: [urlVariable, hostVariable],
  });
}

export function replicaHostWithoutParts(
  replicaHostVariable: string,
  primaryUrlVariable: string,
): ClientError {
  return new ClientError({
    code: "replica_host_without_parts",
    message: `${replicaHostVariable} gives only a host, but the primary comes whole from ${primaryUrlVariable}; its other fields are not taken apart to guess the replica's`,
    hint: `give the replica as a whole URL in the read-only URL variable, or the primary as host/port/user/password/name variables`,
    variables: [replicaHostVariable, primaryUrlVariable],
  });
}

export function invalidUrl(variable: string, reason: string): ClientError {
  return new ClientError({
    code: "invalid_url",
    message: `${variable} is not a usable PostgreSQL URL: ${reason}`,
    hint: `write it as postgres://user:password@host:5432/database`,
    variables: [variable],
  });
}

export function invalidPort(variable: string, value: string): ClientError {
  return new ClientError({
    code: "invalid_port",
    message: `${variable} must be a port number from 1 to 65535, got ${JSON.stringify(value)}`,
    hint: `set ${variable} to a number such as 5432, or unset it for the default 5432`,
    variables: [variable],
  });
}

export function invalidOption(option: string, detail: string): ClientError {
  return new ClientError({
    code: "invalid_option",
    message: `cluster option ${option} ${detail}`,
    hint: "every *Ms option must be a positive number, and replicaRetryMaxMs at least replicaRetryMinMs",
  });
}

export function primaryUnreachable(cause: unknown): ClientError {
  return new ClientError({
    code: "primary_unreachable",
    message: `the primary did not answer at start-up: ${messageOf(cause)}`,
    hint: "check the primary's address and credentials; a missing replica only degrades, a missing primary fails start-up",
    sqlState: "08001",
    cause,
  });
}

export function migrationInvalid(detail: string): ClientError {
  return new ClientError({
    code: "migration_invalid",
    message: `migration list is invalid: ${detail}`,
    hint: "give every migration a unique, non-empty id and keep the list in the order it must run",
  });
}

export function migrationGap(missing: string, laterApplied: string): ClientError {
  return new ClientError({
    code: "migration_gap",
    message: `migration ${missing} was never applied, but the later migration ${laterApplied} was`,
    hint: "append new migrations at the end of the list; never insert one before a migration that already ran",
  });
}

export function migrationFailed(id: string, cause: unknown): ClientError {
  const sqlState = (cause as { code?: unknown } | null)?.code;
  return new ClientError({
    code: "migration_failed",
    message: `migration ${id} failed and was rolled back: ${messageOf(cause)}`,
    hint: "fix the migration and run again; the migrations before it stay applied",
    ...(typeof sqlState === "string" && /^[0-9A-Z]{5}$/.test(sqlState) ? { sqlState } : {}),
    cause,
  });
}
