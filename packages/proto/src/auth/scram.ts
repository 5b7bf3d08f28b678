import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { SqlState, type SqlStateCode } from "../errors/sqlstate.js";
import { saslPrep } from "./saslprep.js";

/** The only SASL mechanism offered: channel binding (-PLUS) is not. */
export const SCRAM_SHA_256 = "SCRAM-SHA-256";
/** PostgreSQL's default iteration count (scram_iterations). */
export const DEFAULT_SCRAM_ITERATIONS = 4096;
const KEY_LENGTH = 32;
const NONCE_BYTES = 18;
const SALT_BYTES = 16;

/** Why a SCRAM exchange stopped, with the SQLSTATE to report it under. */
export const ScramFailureReason = {
  /** A message does not follow the RFC 5802 grammar. */
  malformed: "malformed",
  /** Channel binding was asked for (we offer none), or an authzid was given. */
  unsupported: "unsupported",
  /** The nonce was not the one agreed, or the server's does not extend the client's. */
  nonceMismatch: "nonce-mismatch",
  /** The proof does not match: wrong password (or unknown role). */
  invalidProof: "invalid-proof",
  /** The server's signature is wrong: it does not hold the verifier. */
  invalidServerSignature: "invalid-server-signature",
  /** The server reported an error in server-final ("e=..."). */
  serverError: "server-error",
  /** A step was called out of order. */
  outOfOrder: "out-of-order",
} as const;
export type ScramFailureReason = (typeof ScramFailureReason)[keyof typeof ScramFailureReason];

export interface ScramFailure {
  readonly kind: "scram-failure";
  readonly reason: ScramFailureReason;
  readonly message: string;
  /** 28P01 for a wrong proof, 28000 for refused options, 08P01 for a malformed exchange. */
  readonly code: SqlStateCode;
}

function failure(reason: ScramFailureReason, message: string): ScramFailure {
  const code =
    reason === ScramFailureReason.invalidProof
      ? SqlState.invalid_password
      : reason === ScramFailureReason.unsupported
        ? SqlState.invalid_authorization_specification
        : SqlState.protocol_violation;
  return { kind: "scram-failure", reason, message, code };
}

export function isScramFailure(value: unknown): value is ScramFailure {
  return (
    typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "scram-failure"
  );
}

// ---------------------------------------------------------------------------------------------
// Key derivation and the stored verifier

/** The secrets a server keeps for a role: what pg_authid.rolpassword holds for SCRAM. */
export interface ScramVerifier {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

/** The keys a password derives for one salt and iteration count. */
export interface ScramKeys {
  readonly clientKey: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

function hmac(key: Uint8Array, text: string): Buffer {
  return createHmac("sha256", key).update(text, "utf8").digest();
}

function sha256(data: Uint8Array): Buffer {
  return createHash("sha256").update(data).digest();
}

function xor(a: Uint8Array, b: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** SaltedPassword = PBKDF2-HMAC-SHA-256(SASLprep(password), salt, i); then the three keys. */
export function deriveScramKeys(password: string, salt: Uint8Array, iterations: number): ScramKeys {
  const salted = pbkdf2Sync(Buffer.from(saslPrep(password), "utf8"), salt, iterations, KEY_LENGTH, "sha256");
  const clientKey = hmac(salted, "Client Key");
  return { clientKey, storedKey: sha256(clientKey), serverKey: hmac(salted, "Server Key") };
}

/** Makes the verifier PostgreSQL would store for `password` (random 16-byte salt by default). */
export function makeScramVerifier(
  password: string,
  options: { readonly iterations?: number | undefined; readonly salt?: Buffer | undefined } = {},
): ScramVerifier {
  const iterations = options.iterations ?? DEFAULT_SCRAM_ITERATIONS;
  const salt = options.salt ?? randomBytes(SALT_BYTES);
  const { storedKey, serverKey } = deriveScramKeys(password, salt, iterations);
  return { iterations, salt, storedKey, serverKey };
}

/** `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, all base64. */
export function formatScramVerifier(v: ScramVerifier): string {
  return `${SCRAM_SHA_256}$${v.iterations}:${v.salt.toString("base64")}$${v.storedKey.toString("base64")}:${v.serverKey.toString("base64")}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(text: string): Buffer | null {
  return BASE64.test(text) ? Buffer.from(text, "base64") : null;
}

/** Parses a stored verifier; null when the text is not one (an MD5 hash, a plain password...). */
export function parseScramVerifier(text: string): ScramVerifier | null {
  const match = /^SCRAM-SHA-256\$(\d{1,10}):([^$:]+)\$([^$:]+):([^$:]+)$/.exec(text);
  if (!match) return null;
  const iterations = Number(match[1]);
  const salt = decodeBase64(match[2]!);
  const storedKey = decodeBase64(match[3]!);
  const serverKey = decodeBase64(match[4]!);
  if (iterations < 1 || iterations > 0x7fffffff || !salt || salt.length === 0) return null;
  if (!storedKey || storedKey.length !== KEY_LENGTH || !serverKey || serverKey.length !== KEY_LENGTH)
    return null;
  return { iterations, salt, storedKey, serverKey };
}

// ---------------------------------------------------------------------------------------------
// Message grammar (RFC 5802 section 7)

/** A nonce: printable ASCII except ','. */
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

function attributes(text: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const part of text.split(",")) {
    if (part.length < 2 || part[1] !== "=" || !/[A-Za-z]/.test(part[0]!)) return null;
    if (out.has(part[0]!)) return null;
    out.set(part[0]!, part.slice(2));
  }
  return out;
}

function newNonce(): string {
  return randomBytes(NONCE_BYTES).toString("base64");
}

function asText(message: Buffer | string): string {
  return typeof message === "string" ? message : message.toString("utf8");
}

// ---------------------------------------------------------------------------------------------
// Server side

export type ScramServerStep =
  | { readonly ok: true; readonly message: Buffer }
  | { readonly ok: false; readonly failure: ScramFailure };

export type ScramServerFinal =
  | {
      readonly ok: true;
      /** server-final-message, sent in AuthenticationSASLFinal. */
      readonly message: Buffer;
      /**
       * The ClientKey the proof revealed: with it the proxy can log in to a backend holding the
       * same verifier as this client (passthrough), without knowing the password.
       */
      readonly clientKey: Buffer;
    }
  | { readonly ok: false; readonly failure: ScramFailure };

export interface ScramServerOptions {
  /** Server part of the nonce; random 18 bytes (base64) unless given (tests). */
  readonly serverNonce?: string | undefined;
}

/**
 * The server half of SCRAM-SHA-256 against a stored verifier.
 *
 * 1. Send AuthenticationSASL ["SCRAM-SHA-256"].
 * 2. `clientFirst(SASLInitialResponse.data)` -> send AuthenticationSASLContinue(message).
 * 3. `clientFinal(SASLResponse.data)` -> send AuthenticationSASLFinal(message), then AuthenticationOk.
 *
 * The user name inside client-first is ignored (PostgreSQL uses the StartupMessage's). An unknown
 * role must fail like a wrong password: use `ScramServer.forUnknownRole`.
 */
export class ScramServer {
  private state: "initial" | "sent-first" | "done" = "initial";
  private clientFirstBare = "";
  private serverFirst = "";
  private gs2Header = "";
  private nonce = "";
  private readonly serverNonce: string;

  constructor(
    private readonly verifier: ScramVerifier,
    options: ScramServerOptions = {},
    private readonly alwaysFail = false,
  ) {
    this.serverNonce = options.serverNonce ?? newNonce();
  }

  /**
   * A server for a role that does not exist: it answers with a salt derived from `secret` and the
   * role name (stable, so probing twice looks the same) and rejects every proof, so a login attempt
   * cannot tell a missing role from a wrong password.
   */
  static forUnknownRole(role: string, secret: Uint8Array, options: ScramServerOptions = {}): ScramServer {
    const salt = createHmac("sha256", secret).update(`salt:${role}`).digest().subarray(0, SALT_BYTES);
    const key = createHmac("sha256", secret).update(`key:${role}`).digest();
    const verifier = { iterations: DEFAULT_SCRAM_ITERATIONS, salt, storedKey: key, serverKey: key };
    return new ScramServer(verifier, options, true);
  }

  /** Reads client-first-message; returns server-first-message. */
  clientFirst(message: Buffer | string): ScramServerStep {
    if (this.state !== "initial") return this.stop(ScramFailureReason.outOfOrder, "client-first sent twice");
    const text = asText(message);
    // gs2-header: cbind-flag "," [authzid] ","
    const first = text.indexOf(",");
    const second = first === -1 ? -1 : text.indexOf(",", first + 1);
    if (second === -1) return this.stop(ScramFailureReason.malformed, "client-first has no GS2 header");
    const flag = text.slice(0, first);
    const authzid = text.slice(first + 1, second);
    if (flag.startsWith("p=")) {
      return this.stop(ScramFailureReason.unsupported, "channel binding was requested but is not offered");
    }
    // 'y': the client could bind but thinks we cannot; true, as we advertise no -PLUS mechanism.
    if (flag !== "n" && flag !== "y")
      return this.stop(ScramFailureReason.malformed, `bad GS2 flag "${flag}"`);
    if (authzid !== "")
      return this.stop(ScramFailureReason.unsupported, "an authorization identity is not supported");
    const bare = text.slice(second + 1);
    if (bare.startsWith("m="))
      return this.stop(ScramFailureReason.unsupported, "mandatory SCRAM extensions are not supported");
    const attrs = attributes(bare);
    const user = attrs?.get("n");
    const clientNonce = attrs?.get("r");
    if (!attrs || user === undefined || clientNonce === undefined || !bare.startsWith("n=")) {
      return this.stop(ScramFailureReason.malformed, "client-first lacks n= or r=");
    }
    if (!NONCE.test(clientNonce))
      return this.stop(ScramFailureReason.malformed, "client nonce has characters outside printable ASCII");
    if (!NONCE.test(this.serverNonce))
      return this.stop(ScramFailureReason.malformed, "server nonce is not printable");
    this.gs2Header = text.slice(0, second + 1);
    this.clientFirstBare = bare;
    this.nonce = clientNonce + this.serverNonce;
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString("base64")},i=${this.verifier.iterations}`;
    this.state = "sent-first";
    return { ok: true, message: Buffer.from(this.serverFirst, "utf8") };
  }

  /** Reads client-final-message, checks the proof in constant time, returns server-final-message. */
  clientFinal(message: Buffer | string): ScramServerFinal {
    if (this.state !== "sent-first")
      return this.stop(ScramFailureReason.outOfOrder, "client-final before client-first");
    this.state = "done";
    const text = asText(message);
    const proofAt = text.lastIndexOf(",p=");
    if (proofAt === -1) return this.stop(ScramFailureReason.malformed, "client-final has no proof");
    const withoutProof = text.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    const binding = attrs?.get("c");
    const nonce = attrs?.get("r");
    if (!attrs || binding === undefined || nonce === undefined || !withoutProof.startsWith("c=")) {
      return this.stop(ScramFailureReason.malformed, "client-final lacks c= or r=");
    }
    const bindingBytes = decodeBase64(binding);
    if (!bindingBytes?.equals(Buffer.from(this.gs2Header, "utf8"))) {
      return this.stop(ScramFailureReason.unsupported, "channel binding data does not match the GS2 header");
    }
    if (nonce !== this.nonce)
      return this.stop(ScramFailureReason.nonceMismatch, "client-final nonce differs from the agreed nonce");
    const proof = decodeBase64(text.slice(proofAt + 3));
    if (!proof || proof.length !== KEY_LENGTH)
      return this.stop(ScramFailureReason.malformed, "proof is not 32 bytes of base64");
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.verifier.storedKey, authMessage);
    const clientKey = xor(proof, clientSignature);
    const matches = timingSafeEqual(sha256(clientKey), this.verifier.storedKey);
    if (!matches || this.alwaysFail)
      return this.stop(ScramFailureReason.invalidProof, "password authentication failed");
    const serverSignature = hmac(this.verifier.serverKey, authMessage);
    return { ok: true, message: Buffer.from(`v=${serverSignature.toString("base64")}`, "utf8"), clientKey };
  }

  private stop(
    reason: ScramFailureReason,
    message: string,
  ): { readonly ok: false; readonly failure: ScramFailure } {
    this.state = "done";
    return { ok: false, failure: failure(reason, message) };
  }
}

// ---------------------------------------------------------------------------------------------
// Client side

/**
 * What a client proves itself with: the password, or the ClientKey it derives (captured by
 * `ScramServer.clientFinal` from a client of the proxy). With only a ClientKey the server can be
 * checked if its ServerKey is known; without one `serverVerified` stays false.
 */
export type ScramCredentials =
  | { readonly password: string }
  | { readonly clientKey: Buffer; readonly serverKey?: Buffer | undefined };

export interface ScramClientOptions {
  /** Client nonce; random 18 bytes (base64) unless given (tests). */
  readonly nonce?: string | undefined;
  /** Sent as n= in client-first. PostgreSQL ignores it; libpq sends it empty. */
  readonly username?: string | undefined;
  /** Refuse servers asking for more PBKDF2 rounds than this (default 1,000,000). */
  readonly maxIterations?: number | undefined;
}

/**
 * The client half of SCRAM-SHA-256 (no channel binding).
 *
 * @example
 * ```ts
 * // on AuthenticationSASL with "SCRAM-SHA-256" among the mechanisms:
 * const scram = new ScramClient({ password });
 * send(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
 * // on AuthenticationSASLContinue:
 * const final = scram.serverFirst(msg.data);
 * if (isScramFailure(final)) throw ...; else send(encodeSASLResponse({ data: final }));
 * // on AuthenticationSASLFinal:
 * const failure = scram.serverFinal(msg.data); // null when the server proved it holds the verifier
 * ```
 */
export class ScramClient {
  readonly mechanism = SCRAM_SHA_256;
  private readonly nonce: string;
  private readonly clientFirstBare: string;
  private readonly maxIterations: number;
  private state: "initial" | "sent-first" | "sent-final" | "done" = "initial";
  private expectedServerSignature: Buffer | null = null;
  private derived: ScramKeys | null = null;
  private verified = false;

  constructor(
    private readonly credentials: ScramCredentials,
    options: ScramClientOptions = {},
  ) {
    this.nonce = options.nonce ?? newNonce();
    const user = (options.username ?? "").replaceAll("=", "=3D").replaceAll(",", "=2C");
    this.clientFirstBare = `n=${user},r=${this.nonce}`;
    this.maxIterations = options.maxIterations ?? 1_000_000;
  }

  /** client-first-message, the data of SASLInitialResponse. */
  clientFirst(): Buffer {
    this.state = "sent-first";
    return Buffer.from(`n,,${this.clientFirstBare}`, "utf8");
  }

  /** Reads server-first-message; returns client-final-message (the data of SASLResponse). */
  serverFirst(message: Buffer | string): Buffer | ScramFailure {
    if (this.state !== "sent-first")
      return this.stop(ScramFailureReason.outOfOrder, "server-first before client-first");
    const text = asText(message);
    if (text.startsWith("m="))
      return this.stop(ScramFailureReason.unsupported, "server requires a SCRAM extension");
    const attrs = attributes(text);
    const nonce = attrs?.get("r");
    const saltText = attrs?.get("s");
    const iterationText = attrs?.get("i");
    if (
      !attrs ||
      nonce === undefined ||
      saltText === undefined ||
      iterationText === undefined ||
      !text.startsWith("r=")
    ) {
      return this.stop(ScramFailureReason.malformed, "server-first lacks r=, s= or i=");
    }
    if (!nonce.startsWith(this.nonce) || nonce.length === this.nonce.length || !NONCE.test(nonce)) {
      return this.stop(ScramFailureReason.nonceMismatch, "server nonce does not extend the client nonce");
    }
    const salt = decodeBase64(saltText);
    if (!salt || salt.length === 0) return this.stop(ScramFailureReason.malformed, "salt is not base64");
    if (!/^\d{1,10}$/.test(iterationText))
      return this.stop(ScramFailureReason.malformed, "iteration count is not a number");
    const iterations = Number(iterationText);
    if (iterations < 1 || iterations > this.maxIterations) {
      return this.stop(
        ScramFailureReason.unsupported,
        `iteration count ${iterations} outside 1..${this.maxIterations}`,
      );
    }
    let clientKey: Buffer;
    let serverKey: Buffer | undefined;
    if ("password" in this.credentials) {
      this.derived = deriveScramKeys(this.credentials.password, salt, iterations);
      clientKey = this.derived.clientKey;
      serverKey = this.derived.serverKey;
    } else {
      clientKey = this.credentials.clientKey;
      serverKey = this.credentials.serverKey;
      if (clientKey.length !== KEY_LENGTH)
        return this.stop(ScramFailureReason.malformed, "ClientKey is not 32 bytes");
    }
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${text},${withoutProof}`;
    const proof = xor(clientKey, hmac(sha256(clientKey), authMessage));
    this.expectedServerSignature = serverKey === undefined ? null : hmac(serverKey, authMessage);
    this.state = "sent-final";
    return Buffer.from(`${withoutProof},p=${proof.toString("base64")}`, "utf8");
  }

  /**
   * Reads server-final-message. Returns null when the exchange is complete; `serverVerified` then
   * says whether the server's signature was checked (always, unless only a ClientKey was given).
   */
  serverFinal(message: Buffer | string): ScramFailure | null {
    if (this.state !== "sent-final")
      return this.stop(ScramFailureReason.outOfOrder, "server-final before client-final");
    this.state = "done";
    const text = asText(message);
    const attrs = attributes(text);
    const error = attrs?.get("e");
    if (error !== undefined) return failure(ScramFailureReason.serverError, `server refused: ${error}`);
    const signature = attrs?.get("v");
    const bytes = signature === undefined ? null : decodeBase64(signature);
    if (!bytes) return failure(ScramFailureReason.malformed, "server-final lacks v=");
    if (this.expectedServerSignature === null) return null;
    if (bytes.length !== KEY_LENGTH || !timingSafeEqual(bytes, this.expectedServerSignature)) {
      return failure(
        ScramFailureReason.invalidServerSignature,
        "server signature does not match: it does not hold the verifier",
      );
    }
    this.verified = true;
    return null;
  }

  /** True once `serverFinal` checked the server's signature. */
  get serverVerified(): boolean {
    return this.verified;
  }

  /** The keys derived from the password (after `serverFirst`); null when built from a ClientKey. */
  get keys(): ScramKeys | null {
    return this.derived;
  }

  private stop(reason: ScramFailureReason, message: string): ScramFailure {
    this.state = "done";
    return failure(reason, message);
  }
}
