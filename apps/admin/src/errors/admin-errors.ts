/** Stable codes of the errors the admin port raises; callers branch on these, never on text. */
export const ADMIN_ERROR_CODES = [
  "ADMIN_PASSWORD_REQUIRED",
  "ADMIN_PASSWORD_EMPTY",
  "ADMIN_TLS_INCOMPLETE",
  "ADMIN_PORT_INVALID",
  "ADMIN_LISTEN_FAILED",
] as const;
export type AdminErrorCode = (typeof ADMIN_ERROR_CODES)[number];

/** An admin port that cannot start, with what to change. */
export class AdminError extends Error {
  override readonly name = "AdminError";
  readonly code: AdminErrorCode;
  readonly hint: string;

  constructor(code: AdminErrorCode, message: string, hint: string, options?: { cause: unknown }) {
    super(message, options);
    this.code = code;
    this.hint = hint;
  }
}

export function passwordRequiredBeyondLoopback(host: string): AdminError {
  return new AdminError(
    "ADMIN_PASSWORD_REQUIRED",
    `the admin port would listen on ${host}, beyond loopback, without a password`,
    "set [admin] password, or listen on 127.0.0.1",
  );
}

export function emptyPassword(): AdminError {
  return new AdminError(
    "ADMIN_PASSWORD_EMPTY",
    "the admin password is empty",
    "set [admin] password to a non-empty secret, or remove it on loopback",
  );
}

export function tlsIncomplete(missing: "cert" | "key"): AdminError {
  return new AdminError(
    "ADMIN_TLS_INCOMPLETE",
    `HTTPS for the admin port needs a certificate and a key; the ${missing} is missing`,
    "set [tls] cert and [tls] key, or set [admin] tls = false",
  );
}

export function invalidPort(port: number): AdminError {
  return new AdminError(
    "ADMIN_PORT_INVALID",
    `the admin port ${port} is not an integer in 0..65535`,
    "set [admin] port to 0..65535 (0 picks a free one)",
  );
}

export function listenFailed(host: string, port: number, cause: unknown): AdminError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new AdminError(
    "ADMIN_LISTEN_FAILED",
    `the admin port could not listen on ${host}:${port}: ${reason}`,
    "choose a free [admin] port, or stop what holds it",
    { cause },
  );
}
