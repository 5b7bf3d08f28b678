import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls";
import { tlsServerEndPoint } from "../auth/channel-binding.js";

/** The ALPN protocol name PostgreSQL 17 clients offer, and require for direct TLS. */
export const POSTGRES_ALPN = "postgresql";

/** TLS towards clients: the configured certificate, loaded once at start. */
export interface ClientTls {
  readonly context: SecureContext;
  /** Refuse a StartupMessage that arrives in clear. */
  readonly required: boolean;
  /** `tls-server-end-point` channel binding data of the certificate (SCRAM-SHA-256-PLUS). */
  readonly endPoint: Buffer;
}

/**
 * Reads `[tls] cert` and `key`; null when no certificate is configured. Throws an Error naming the
 * file when one cannot be read or the pair does not match.
 */
export function loadClientTls(tls: {
  readonly cert?: string;
  readonly key?: string;
  readonly requireClientTls: boolean;
}): ClientTls | null {
  if (tls.cert === undefined || tls.key === undefined) return null;
  const cert = readPem(tls.cert, "tls.cert");
  const key = readPem(tls.key, "tls.key");
  try {
    const context = createSecureContext({ cert, key, minVersion: "TLSv1.2" });
    // The first certificate of the file is the one presented, and the one a client hashes.
    const endPoint = tlsServerEndPoint(new X509Certificate(cert).raw);
    return { context, required: tls.requireClientTls, endPoint };
  } catch (error) {
    throw new Error(
      `tls.cert / tls.key (${tls.cert}, ${tls.key}) cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function readPem(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(
      `${field}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * Runs the server side of a TLS handshake over `socket` (TLS 1.2 or newer). `direct`: the client
 * opened with a ClientHello instead of an SSLRequest (PostgreSQL 17 sslnegotiation=direct), which
 * is accepted only with ALPN "postgresql", as PostgreSQL does, so that a TLS client of some other
 * protocol pointed at this port cannot be mistaken for a PostgreSQL one.
 */
export function acceptTls(socket: Socket | Duplex, tls: ClientTls, direct: boolean): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = new TLSSocket(socket as Socket, {
      isServer: true,
      secureContext: tls.context,
      ALPNProtocols: [POSTGRES_ALPN],
    });
    const fail = (error: Error) => {
      secure.destroy();
      socket.destroy();
      reject(error);
    };
    secure.once("error", fail);
    secure.once("secure", () => {
      secure.off("error", fail);
      if (direct && secure.alpnProtocol !== POSTGRES_ALPN) {
        fail(new Error('direct TLS without ALPN "postgresql"'));
        return;
      }
      resolve(secure);
    });
  });
}
