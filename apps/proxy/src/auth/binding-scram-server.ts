import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { DEFAULT_SCRAM_ITERATIONS, type ScramVerifier } from "@geo/proto";
import { TLS_SERVER_END_POINT } from "./channel-binding.js";

/** SCRAM-SHA-256 with channel binding, offered over TLS next to plain SCRAM-SHA-256. */
export const SCRAM_SHA_256_PLUS = "SCRAM-SHA-256-PLUS";

const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type BindingStep =
  | { readonly ok: true; readonly message: Buffer; readonly clientKey?: Buffer }
  | { readonly ok: false; readonly wrongPassword: boolean; readonly detail: string };

/**
 * The mock verifier of a role that does not exist, derived as `ScramServer.forUnknownRole` does
 * (HMAC of a per-process secret and the role name), so an unknown role shows the same salt over
 * TLS and in clear.
 */
export function mockVerifier(role: string, secret: Uint8Array): ScramVerifier {
  const salt = createHmac("sha256", secret).update(`salt:${role}`).digest().subarray(0, 16);
  const key = createHmac("sha256", secret).update(`key:${role}`).digest();
  return { iterations: DEFAULT_SCRAM_ITERATIONS, salt, storedKey: key, serverKey: key };
}

/**
 * The server half of SCRAM-SHA-256 on a TLS connection where SCRAM-SHA-256-PLUS is offered
 * (RFC 5802 and 5929). The client's GS2 header decides:
 *
 * - `p=tls-server-end-point`: channel binding; the client-final `c=` must carry the header followed
 *   by the hash of our certificate, which a man in the middle with another certificate cannot
 *   produce. Allowed only with the -PLUS mechanism.
 * - `n`: the client does not bind (plain SCRAM-SHA-256 over TLS is still allowed, as PostgreSQL does).
 * - `y`: the client could bind but believes the server cannot. We advertised -PLUS, so someone
 *   removed it on the way: refused (a downgrade attempt).
 */
export class BindingScramServer {
  private state: "initial" | "sent-first" | "done" = "initial";
  private clientFirstBare = "";
  private serverFirst = "";
  private expectedBinding = Buffer.alloc(0);
  private nonce = "";

  constructor(
    private readonly verifier: ScramVerifier,
    private readonly endPoint: Buffer,
    private readonly mechanism: string,
    private readonly alwaysFail: boolean,
  ) {}

  clientFirst(data: Buffer): BindingStep {
    if (this.state !== "initial") return this.stop("client-first sent twice");
    const text = data.toString("utf8");
    const first = text.indexOf(",");
    const second = first === -1 ? -1 : text.indexOf(",", first + 1);
    if (second === -1) return this.stop("client-first has no GS2 header");
    const flag = text.slice(0, first);
    const plus = this.mechanism === SCRAM_SHA_256_PLUS;
    if (flag.startsWith("p=")) {
      if (!plus) return this.stop("channel binding was requested without selecting SCRAM-SHA-256-PLUS");
      if (flag.slice(2) !== TLS_SERVER_END_POINT)
        return this.stop(`channel binding type "${flag.slice(2)}" is not supported`);
    } else if (plus) return this.stop("SCRAM-SHA-256-PLUS was selected without channel binding");
    else if (flag === "y")
      return this.stop(
        "the client believes the server cannot bind channels, but SCRAM-SHA-256-PLUS was offered",
      );
    else if (flag !== "n") return this.stop(`bad GS2 flag "${flag}"`);
    if (text.slice(first + 1, second) !== "") return this.stop("an authorization identity is not supported");
    const bare = text.slice(second + 1);
    const nonce = /^n=[^,]*,r=([^,]+)(?:,|$)/.exec(bare)?.[1];
    if (nonce === undefined || !NONCE.test(nonce))
      return this.stop("client-first lacks n= or a printable r=");
    const header = Buffer.from(text.slice(0, second + 1), "utf8");
    this.expectedBinding = flag.startsWith("p=") ? Buffer.concat([header, this.endPoint]) : header;
    this.clientFirstBare = bare;
    this.nonce = nonce + randomBytes(18).toString("base64");
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString("base64")},i=${this.verifier.iterations}`;
    this.state = "sent-first";
    return { ok: true, message: Buffer.from(this.serverFirst, "utf8") };
  }

  clientFinal(data: Buffer): BindingStep {
    if (this.state !== "sent-first") return this.stop("client-final before client-first");
    this.state = "done";
    const text = data.toString("utf8");
    const proofAt = text.lastIndexOf(",p=");
    if (proofAt === -1) return this.stop("client-final has no proof");
    const withoutProof = text.slice(0, proofAt);
    const match = /^c=([^,]*),r=([^,]*)(?:,|$)/.exec(withoutProof);
    if (match === null || !BASE64.test(match[1]!)) return this.stop("client-final lacks c= or r=");
    const binding = Buffer.from(match[1]!, "base64");
    if (binding.length !== this.expectedBinding.length || !timingSafeEqual(binding, this.expectedBinding))
      return this.stop("channel binding data does not match this connection");
    if (match[2] !== this.nonce) return this.stop("client-final nonce differs from the agreed nonce");
    const proofText = text.slice(proofAt + 3);
    const proof = BASE64.test(proofText) ? Buffer.from(proofText, "base64") : null;
    if (proof === null || proof.length !== 32) return this.stop("proof is not 32 bytes of base64");
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = createHmac("sha256", this.verifier.storedKey).update(authMessage).digest();
    const clientKey = Buffer.alloc(32);
    for (let i = 0; i < 32; i++) clientKey[i] = proof[i]! ^ signature[i]!;
    const matches = timingSafeEqual(createHash("sha256").update(clientKey).digest(), this.verifier.storedKey);
    if (!matches || this.alwaysFail) return { ok: false, wrongPassword: true, detail: "invalid proof" };
    const serverSignature = createHmac("sha256", this.verifier.serverKey).update(authMessage).digest();
    return { ok: true, message: Buffer.from(`v=${serverSignature.toString("base64")}`, "utf8"), clientKey };
  }

  private stop(detail: string): BindingStep {
    this.state = "done";
    return { ok: false, wrongPassword: false, detail };
  }
}
