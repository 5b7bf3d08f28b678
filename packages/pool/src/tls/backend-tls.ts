import type { Socket } from "node:net";
import { isIP } from "node:net";
import {
  type ConnectionOptions,
  checkServerIdentity,
  type PeerCertificate,
  connect as tlsConnect,
} from "node:tls";
import { encodeSSLRequest, PgError } from "@geo/proto";
import type { TransportUpgrade } from "../backend-connection.js";
import { backendTlsBadAnswer, backendTlsHandshakeFailed, backendTlsRefused } from "./tls-errors.js";

/** libpq's sslmode names, weakest first. */
export const BACKEND_SSL_MODES = ["disable", "prefer", "require", "verify-ca", "verify-full"] as const;
export type BackendSslMode = (typeof BACKEND_SSL_MODES)[number];

export interface BackendTlsOptions {
  readonly sslmode: BackendSslMode;
  /** PEM CA certificate(s) for verify-ca / verify-full; absent: Node's bundled Mozilla roots. */
  readonly ca?: string | Buffer | undefined;
  /** The host name the certificate must name under verify-full (the endpoint's `host`). */
  readonly host: string;
}

/**
 * The `upgrade` hook that gives a backend connection libpq's sslmode behaviour, or undefined for
 * `disable` (plain TCP, no SSLRequest).
 *
 * | sslmode     | SSLRequest | 'N' answer     | certificate checked            |
 * | ----------- | ---------- | -------------- | ------------------------------ |
 * | prefer      | yes        | continue plain | no                             |
 * | require     | yes        | fail (08001)   | no                             |
 * | verify-ca   | yes        | fail (08001)   | chain to the CA                |
 * | verify-full | yes        | fail (08001)   | chain to the CA, and host name |
 *
 * @example
 * ```ts
 * const upgrade = backendTlsUpgrade({ sslmode: "verify-full", ca: readFileSync("ca.pem"), host: "db.eu" });
 * const conn = await BackendConnection.connect({ host: "db.eu", port: 5432, ..., upgrade });
 * ```
 */
export function backendTlsUpgrade(options: BackendTlsOptions): TransportUpgrade | undefined {
  if (options.sslmode === "disable") return undefined;
  return (socket, context) => upgradeToTls(socket, context.address, context.signal, options);
}

async function upgradeToTls(
  socket: Socket,
  address: string,
  signal: AbortSignal,
  options: BackendTlsOptions,
): Promise<Socket> {
  const answer = await readAnswer(socket, address, signal);
  if (answer === "N") {
    if (options.sslmode === "prefer") return socket;
    socket.destroy();
    throw backendTlsRefused(address, options.sslmode);
  }
  return handshake(socket, address, signal, options);
}

/**
 * Sends SSLRequest and reads the one-byte answer. Anything after an 'S' arrived before the
 * handshake and so was never encrypted: a man in the middle could have injected it
 * (CVE-2021-23222), so it fails the connection instead of being read as protocol.
 */
function readAnswer(socket: Socket, address: string, signal: AbortSignal): Promise<"S" | "N"> {
  return new Promise((resolve, reject) => {
    const finish = (error: PgError | null, answer?: "S" | "N") => {
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("close", onClose);
      signal.removeEventListener("abort", onAbort);
      if (error !== null) {
        socket.destroy();
        reject(error);
      } else {
        resolve(answer!);
      }
    };
    const onData = (chunk: Buffer) => {
      const first = chunk[0];
      if (chunk.length > 1) {
        finish(
          backendTlsBadAnswer(
            address,
            `${chunk.length - 1} byte(s) followed the answer before the handshake`,
          ),
        );
      } else if (first === 0x53) finish(null, "S");
      else if (first === 0x4e) finish(null, "N");
      else if (first === 0x45)
        finish(backendTlsBadAnswer(address, "an ErrorResponse (server older than 7.0?)"));
      else finish(backendTlsBadAnswer(address, `byte 0x${(first ?? 0).toString(16)}`));
    };
    const onError = (error: Error) => finish(backendTlsBadAnswer(address, error.message));
    const onClose = () => finish(backendTlsBadAnswer(address, "connection closed"));
    const onAbort = () => finish(backendTlsBadAnswer(address, "timed out"));
    socket.on("data", onData);
    socket.once("error", onError);
    socket.once("close", onClose);
    signal.addEventListener("abort", onAbort, { once: true });
    socket.write(encodeSSLRequest());
  });
}

function handshake(
  socket: Socket,
  address: string,
  signal: AbortSignal,
  options: BackendTlsOptions,
): Promise<Socket> {
  const verify = options.sslmode === "verify-ca" || options.sslmode === "verify-full";
  const tlsOptions: ConnectionOptions = {
    socket,
    minVersion: "TLSv1.2",
    rejectUnauthorized: verify,
    // SNI only carries names, never addresses (RFC 6066).
    ...(isIP(options.host) === 0 ? { servername: options.host } : {}),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    checkServerIdentity:
      options.sslmode === "verify-full"
        ? (_host: string, cert: PeerCertificate) => checkServerIdentity(options.host, cert)
        : () => undefined,
  };
  return new Promise((resolve, reject) => {
    const secure = tlsConnect(tlsOptions);
    const fail = (error: Error) => {
      signal.removeEventListener("abort", onAbort);
      secure.destroy();
      socket.destroy();
      reject(
        error instanceof PgError ? error : backendTlsHandshakeFailed(address, options.sslmode, error.message),
      );
    };
    const onAbort = () => fail(new Error("timed out during the handshake"));
    signal.addEventListener("abort", onAbort, { once: true });
    secure.once("error", fail);
    secure.once("secureConnect", () => {
      secure.off("error", fail);
      signal.removeEventListener("abort", onAbort);
      resolve(secure);
    });
  });
}
