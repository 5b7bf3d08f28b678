import { createHmac, randomBytes } from "node:crypto";
import {
  decodePasswordMessage,
  decodeSASLInitialResponse,
  decodeSASLResponse,
  encodeAuthentication,
  isProtocolFault,
  type PgError,
  SCRAM_SHA_256,
  ScramFailureReason,
  ScramServer,
  type ScramVerifier,
  verifyMd5Password,
} from "@geo/proto";
import { authProtocolViolation, passwordFailed } from "./auth-errors.js";
import { BindingScramServer, mockVerifier, SCRAM_SHA_256_PLUS } from "./binding-scram-server.js";
import type { PassthroughSecret } from "./passthrough-secrets.js";
import type { StoredCredential } from "./stored-credential.js";

/** What the client is asked for: the method configured, adjusted to what is stored for the role. */
export const CHALLENGES = ["scram", "md5"] as const;
export type Challenge = (typeof CHALLENGES)[number];

export type LoginStep =
  /** Send these bytes and wait for the client's next message. */
  | { readonly kind: "continue"; readonly send: Buffer }
  /** Logged in: send `send` (SASLFinal, possibly empty) then AuthenticationOk follows. */
  | {
      readonly kind: "ok";
      readonly send: Buffer;
      /**
       * For passthrough: the ClientKey a SCRAM proof revealed with the verifier's ServerKey, or
       * the stored MD5 hash an MD5 answer proved the client knows.
       */
      readonly proved: PassthroughSecret;
    }
  | {
      readonly kind: "fail";
      readonly error: PgError;
      readonly wrongPassword: boolean;
      /** Why, for the proxy's log only: the client's answer is the same whatever the reason. */
      readonly reason: string;
    };

const EMPTY = Buffer.alloc(0);

/**
 * One client's authentication exchange, with no I/O: `begin()` gives the first request, each
 * password-type message ('p') goes to `step()`. A role with no credential gets the same exchange
 * as any other against a mock verifier (`ScramServer.forUnknownRole`, or an MD5 salt), and fails
 * exactly like a wrong password, after the same amount of work.
 *
 * As in PostgreSQL, `md5` falls back to SCRAM for a role whose stored secret is a SCRAM verifier,
 * while `scram-sha-256` never accepts an MD5 hash.
 */
export class LoginExchange {
  private readonly challenge: Challenge;
  private scram: ScramServer | BindingScramServer | null = null;
  private readonly verifier: ScramVerifier | null;
  private readonly md5Salt = randomBytes(4);
  private state: "initial" | "sasl-first" | "sasl-final" | "md5" | "done" = "initial";

  constructor(
    private readonly user: string,
    method: "scram-sha-256" | "md5",
    private readonly credential: StoredCredential | null,
    /** Keys the mock verifier, so an unknown role answers with the same salt every time. */
    private readonly mockSecret: Uint8Array,
    /**
     * Over TLS: the `tls-server-end-point` hash of the proxy's certificate. SCRAM-SHA-256-PLUS is
     * then offered first, as PostgreSQL does.
     */
    private readonly endPoint: Buffer | null = null,
  ) {
    this.challenge = method === "md5" && credential?.kind !== "scram" ? "md5" : "scram";
    this.verifier = credential?.kind === "scram" ? credential.verifier : null;
  }

  begin(): Buffer {
    if (this.challenge === "md5") {
      this.state = "md5";
      return encodeAuthentication({ type: "AuthenticationMD5Password", salt: this.md5Salt });
    }
    this.state = "sasl-first";
    const mechanisms = this.endPoint === null ? [SCRAM_SHA_256] : [SCRAM_SHA_256_PLUS, SCRAM_SHA_256];
    return encodeAuthentication({ type: "AuthenticationSASL", mechanisms });
  }

  /** The payload of the client's 'p' message. */
  step(payload: Buffer): LoginStep {
    switch (this.state) {
      case "md5":
        return this.md5(payload);
      case "sasl-first":
        return this.saslFirst(payload);
      case "sasl-final":
        return this.saslFinal(payload);
      case "initial":
      case "done":
        return this.fail(authProtocolViolation("no authentication message was expected"), false);
    }
  }

  private md5(payload: Buffer): LoginStep {
    const message = decodePasswordMessage(payload);
    if (isProtocolFault(message)) return this.fail(authProtocolViolation(message.message), false);
    // A role without an MD5 hash is checked against a mock one, keyed by a per-process secret no
    // client knows: the same work as a real check, and refused even if it ever matched.
    const stored = this.credential?.kind === "md5" ? this.credential.hash : null;
    const hash =
      stored ?? `md5${createHmac("md5", this.mockSecret).update(`md5:${this.user}`).digest("hex")}`;
    if (!verifyMd5Password(hash, this.md5Salt, message.password) || stored === null)
      return this.passwordFailure();
    this.state = "done";
    return { kind: "ok", send: EMPTY, proved: { kind: "md5", hash: stored } };
  }

  private saslFirst(payload: Buffer): LoginStep {
    const message = decodeSASLInitialResponse(payload);
    if (isProtocolFault(message)) return this.fail(authProtocolViolation(message.message), false);
    const offered =
      message.mechanism === SCRAM_SHA_256 ||
      (this.endPoint !== null && message.mechanism === SCRAM_SHA_256_PLUS);
    if (!offered) {
      return this.fail(
        authProtocolViolation(
          `the client selected SASL mechanism "${message.mechanism}", which was not offered`,
        ),
        false,
      );
    }
    if (message.data === null)
      return this.fail(authProtocolViolation("SASLInitialResponse carries no data"), false);
    if (this.endPoint !== null) {
      const verifier = this.verifier ?? mockVerifier(this.user, this.mockSecret);
      const binding = new BindingScramServer(
        verifier,
        this.endPoint,
        message.mechanism,
        this.verifier === null,
      );
      this.scram = binding;
      const answer = binding.clientFirst(message.data);
      if (!answer.ok) return this.fail(authProtocolViolation(answer.detail), false);
      this.state = "sasl-final";
      return {
        kind: "continue",
        send: encodeAuthentication({ type: "AuthenticationSASLContinue", data: answer.message }),
      };
    }
    const server =
      this.verifier === null
        ? ScramServer.forUnknownRole(this.user, this.mockSecret)
        : new ScramServer(this.verifier);
    this.scram = server;
    const answer = server.clientFirst(message.data);
    if (!answer.ok) return this.scramFailure(answer.failure.reason, answer.failure.message);
    this.state = "sasl-final";
    return {
      kind: "continue",
      send: encodeAuthentication({ type: "AuthenticationSASLContinue", data: answer.message }),
    };
  }

  private saslFinal(payload: Buffer): LoginStep {
    const message = decodeSASLResponse(payload);
    if (isProtocolFault(message)) return this.fail(authProtocolViolation(message.message), false);
    const scram = this.scram!;
    if (scram instanceof BindingScramServer) {
      const bound = scram.clientFinal(message.data);
      if (!bound.ok)
        return bound.wrongPassword
          ? this.passwordFailure()
          : this.fail(authProtocolViolation(bound.detail), false);
      this.state = "done";
      return {
        kind: "ok",
        send: encodeAuthentication({ type: "AuthenticationSASLFinal", data: bound.message }),
        proved: { kind: "scram", keys: { clientKey: bound.clientKey!, serverKey: this.verifier!.serverKey } },
      };
    }
    const answer = scram.clientFinal(message.data);
    if (!answer.ok) return this.scramFailure(answer.failure.reason, answer.failure.message);
    this.state = "done";
    return {
      kind: "ok",
      send: encodeAuthentication({ type: "AuthenticationSASLFinal", data: answer.message }),
      proved: { kind: "scram", keys: { clientKey: answer.clientKey, serverKey: this.verifier!.serverKey } },
    };
  }

  /**
   * A wrong proof is a wrong password. A malformed message is a protocol violation, reported as
   * such whether the role exists or not, so it reveals nothing either.
   */
  private scramFailure(reason: ScramFailureReason, detail: string): LoginStep {
    if (reason === ScramFailureReason.invalidProof) return this.passwordFailure();
    return this.fail(authProtocolViolation(detail), false);
  }

  /**
   * 28P01, the same for every cause. The log learns which, as PostgreSQL's log does: no secret was
   * stored for the role (or the role does not exist), the stored secret is one the method cannot
   * use, or the password was wrong.
   */
  private passwordFailure(): LoginStep {
    const credential = this.credential;
    const reason =
      credential === null
        ? "no usable password is stored for the role, or the role does not exist: there is no secret to check the client against"
        : this.challenge === "scram" && credential.kind === "md5"
          ? 'the role\'s stored secret is an MD5 hash, which method = "scram-sha-256" cannot check'
          : "wrong password";
    return this.fail(passwordFailed(this.user), true, reason);
  }

  private fail(error: PgError, wrongPassword: boolean, reason = error.message): LoginStep {
    this.state = "done";
    return { kind: "fail", error, wrongPassword, reason };
  }
}
