import { PgError, SqlState } from "@geo/proto";

/** The backend answered SSLRequest with 'N' under an sslmode that needs TLS. */
export function backendTlsRefused(address: string, sslmode: string): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `server at ${address} does not support TLS, but sslmode = "${sslmode}" requires it`,
    hint: `Turn on ssl in that server's postgresql.conf, or lower sslmode to "prefer" for this region.`,
  });
}

/** The backend sent bytes other than one 'S' or 'N' in answer to SSLRequest. */
export function backendTlsBadAnswer(address: string, detail: string): PgError {
  return new PgError({
    code: SqlState.protocol_violation,
    message: `server at ${address} answered SSLRequest unexpectedly: ${detail}`,
    hint: "Check that the address is a PostgreSQL server and that nothing between rewrites the stream.",
  });
}

/** The TLS handshake with the backend failed, or its certificate did not verify. */
export function backendTlsHandshakeFailed(address: string, sslmode: string, detail: string): PgError {
  return new PgError({
    code: SqlState.sqlclient_unable_to_establish_sqlconnection,
    message: `TLS to ${address} failed (sslmode = "${sslmode}"): ${detail}`,
    hint:
      sslmode === "verify-full"
        ? "The certificate must be signed by the configured CA (or a system root) and name the host the proxy connects to."
        : sslmode === "verify-ca"
          ? "The certificate must be signed by the configured CA (backend_ca / sslrootcert) or a system root."
          : "Check the server's TLS settings (ssl_cert_file, ssl_key_file, ssl_min_protocol_version).",
  });
}
