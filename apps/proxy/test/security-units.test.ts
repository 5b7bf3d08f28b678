import { createHash, createHmac } from "node:crypto";
import { Writable } from "node:stream";
import { parseConfig } from "@geo/core";
import type { ConnectOptions } from "@geo/pool";
import {
  decodeAuthentication,
  deriveScramKeys,
  encodePasswordMessage,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  isProtocolFault,
  makeScramVerifier,
  md5PasswordHash,
  md5StoredPassword,
  SCRAM_SHA_256,
  ScramClient,
} from "@geo/proto";
import { describe, expect, it } from "vitest";
import { backendConnectFor } from "../src/auth/backend-credentials.js";
import { tlsServerEndPoint } from "../src/auth/channel-binding.js";
import { FailureThrottle } from "../src/auth/failure-throttle.js";
import { LoginExchange, type LoginStep } from "../src/auth/login-exchange.js";
import { PassthroughSecrets } from "../src/auth/passthrough-secrets.js";
import { prepareSecurity } from "../src/auth/security.js";
import { parseStoredPassword, type StoredCredential } from "../src/auth/stored-credential.js";
import { VerifierStore } from "../src/auth/verifier-store.js";
import { createLogger } from "../src/log.js";
import { CancelRegistry } from "../src/server/cancel-registry.js";

const secret = Buffer.alloc(32, 7);

/** The payload of a 'p' message built by the production encoders (code and length cut off). */
function payload(message: Buffer): Buffer {
  return message.subarray(5);
}

function runScram(exchange: LoginExchange, password: string): { first: string; last: LoginStep } {
  const request = decodeAuthentication(payload(exchange.begin()));
  expect(isProtocolFault(request) ? null : request.type).toBe("AuthenticationSASL");
  const client = new ScramClient({ password });
  const continued = exchange.step(
    payload(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: client.clientFirst() })),
  );
  if (continued.kind !== "continue") throw new Error(`expected continue, got ${continued.kind}`);
  const serverFirst = decodeAuthentication(payload(continued.send));
  if (isProtocolFault(serverFirst) || serverFirst.type !== "AuthenticationSASLContinue")
    throw new Error("no SASLContinue");
  const final = client.serverFirst(serverFirst.data);
  if (!Buffer.isBuffer(final)) throw new Error(final.message);
  return {
    first: serverFirst.data.toString("utf8"),
    last: exchange.step(payload(encodeSASLResponse({ data: final }))),
  };
}

describe("the login exchange", () => {
  const alice: StoredCredential = {
    kind: "scram",
    verifier: makeScramVerifier("right", { iterations: 4096 }),
  };

  it("logs in with the right password and yields the ClientKey behind the stored key", () => {
    const { last } = runScram(new LoginExchange("alice", "scram-sha-256", alice, secret), "right");
    expect(last.kind).toBe("ok");
    if (last.kind !== "ok" || last.proved.kind !== "scram") throw new Error("no keys");
    const storedKey = createHash("sha256").update(last.proved.keys.clientKey).digest();
    expect(alice.kind === "scram" && storedKey.equals(alice.verifier.storedKey)).toBe(true);
  });

  it("fails a wrong password and an unknown role with the same code, message shape and exchange", () => {
    const wrong = runScram(new LoginExchange("alice", "scram-sha-256", alice, secret), "wrong");
    const unknown = runScram(new LoginExchange("ghost", "scram-sha-256", null, secret), "wrong");
    const again = runScram(new LoginExchange("ghost", "scram-sha-256", null, secret), "other");
    for (const result of [wrong, unknown]) {
      expect(result.last.kind).toBe("fail");
      if (result.last.kind === "fail") {
        expect(result.last.error.code).toBe("28P01");
        expect(result.last.wrongPassword).toBe(true);
      }
    }
    const message = (step: LoginStep, role: string) =>
      step.kind === "fail" ? step.error.message.replace(role, "<role>") : "";
    expect(message(wrong.last, "alice")).toBe(message(unknown.last, "ghost"));
    const saltOf = (first: string) => /,s=([^,]+),i=(\d+)/.exec(first)?.slice(1);
    expect(saltOf(unknown.first)).toEqual(saltOf(again.first));
    expect(saltOf(unknown.first)?.[1]).toBe(saltOf(wrong.first)?.[1]);
  });

  it("under md5 asks an MD5 hash holder for MD5 and falls back to SCRAM for a SCRAM verifier", () => {
    const md5 = parseStoredPassword("md5" + "0".repeat(32));
    const md5Request = decodeAuthentication(payload(new LoginExchange("m", "md5", md5, secret).begin()));
    expect(isProtocolFault(md5Request) ? null : md5Request.type).toBe("AuthenticationMD5Password");
    const scramRequest = decodeAuthentication(
      payload(new LoginExchange("alice", "md5", alice, secret).begin()),
    );
    expect(isProtocolFault(scramRequest) ? null : scramRequest.type).toBe("AuthenticationSASL");
  });

  it("treats an unoffered mechanism as a protocol violation, not a password failure", () => {
    const exchange = new LoginExchange("alice", "scram-sha-256", alice, secret);
    exchange.begin();
    const step = exchange.step(
      payload(encodeSASLInitialResponse({ mechanism: "PLAIN", data: Buffer.from("x") })),
    );
    expect(step.kind === "fail" ? [step.error.code, step.wrongPassword] : null).toEqual(["08P01", false]);
  });
});

describe("MD5 logins, passthrough's and plain", () => {
  const mallory: StoredCredential = { kind: "md5", hash: md5StoredPassword("mallory", "right") };

  /** Answers the exchange's MD5 challenge as libpq does, from the password and the salt it sent. */
  function runMd5(exchange: LoginExchange, user: string, password: string): LoginStep {
    const request = decodeAuthentication(payload(exchange.begin()));
    if (isProtocolFault(request) || request.type !== "AuthenticationMD5Password")
      throw new Error("expected an MD5 challenge");
    return exchange.step(
      payload(encodePasswordMessage({ password: md5PasswordHash(user, password, request.salt) })),
    );
  }

  it("logs in with the right password and yields the stored hash the answer proved", () => {
    const step = runMd5(new LoginExchange("mallory", "md5", mallory, secret), "mallory", "right");
    expect(step.kind === "ok" ? step.proved : null).toEqual({
      kind: "md5",
      hash: mallory.kind === "md5" && mallory.hash,
    });
  });

  it("challenges with a fresh 4-byte salt each login", () => {
    const salts = [1, 2, 3].map(() => {
      const request = decodeAuthentication(
        payload(new LoginExchange("mallory", "md5", mallory, secret).begin()),
      );
      return isProtocolFault(request) || request.type !== "AuthenticationMD5Password"
        ? null
        : Buffer.from(request.salt);
    });
    expect(salts.every((salt) => salt?.length === 4)).toBe(true);
    expect(new Set(salts.map((salt) => salt?.toString("hex"))).size).toBe(3);
  });

  it("fails a wrong password, and an answer made for another salt, with 28P01", () => {
    const wrong = runMd5(new LoginExchange("mallory", "md5", mallory, secret), "mallory", "wrong");
    expect(wrong.kind === "fail" ? [wrong.error.code, wrong.wrongPassword, wrong.reason] : null).toEqual([
      "28P01",
      true,
      "wrong password",
    ]);
    const exchange = new LoginExchange("mallory", "md5", mallory, secret);
    exchange.begin();
    const replayed = exchange.step(
      payload(
        encodePasswordMessage({ password: md5PasswordHash("mallory", "right", Buffer.from([9, 9, 9, 9])) }),
      ),
    );
    expect(replayed.kind === "fail" ? replayed.error.code : replayed.kind).toBe("28P01");
  });

  it("answers a role without a password exactly as an unknown role and a wrong password, saying why only in the log", () => {
    // A role with no password and a role that does not exist both come back from the store as null.
    const none = runMd5(new LoginExchange("nopass", "md5", null, secret), "nopass", "anything");
    const wrong = runMd5(new LoginExchange("mallory", "md5", mallory, secret), "mallory", "wrong");
    for (const step of [none, wrong])
      expect(step.kind === "fail" ? step.error.code : step.kind).toBe("28P01");
    if (none.kind !== "fail" || wrong.kind !== "fail") throw new Error("expected failures");
    expect(none.error.message.replace("nopass", "<r>")).toBe(wrong.error.message.replace("mallory", "<r>"));
    expect(none.error.hint).toBe(wrong.error.hint);
    expect(none.error.hint).toMatch(
      /no password stored .* give the role a password, or list it under \[auth\] users/,
    );
    expect(none.reason).toMatch(/no secret to check the client against/);
  });

  it("under scram-sha-256 fails an MD5-stored role after a full mock SCRAM exchange, and logs why", () => {
    const { last } = runScram(new LoginExchange("mallory", "scram-sha-256", mallory, secret), "right");
    expect(last.kind === "fail" ? [last.error.code, last.reason] : null).toEqual([
      "28P01",
      'the role\'s stored secret is an MD5 hash, which method = "scram-sha-256" cannot check',
    ]);
  });
});

describe("backend credentials under passthrough", () => {
  const config = parseConfig(
    `[[topology.regions]]
id = "eu"
home = true
primary = { host = "10.0.0.5", port = 5432, database = "app" }

[routing]
default_placement = { placement = "pinned" }

[auth]
method = "md5"
passthrough = true
users = [{ name = "app", password = "app-secret" }]
`,
    "t.toml",
  );

  async function optionsFor(user: string, secrets: PassthroughSecrets): Promise<ConnectOptions> {
    let seen: ConnectOptions | null = null;
    const connect = backendConnectFor(config, secrets, new Map(), async (options) => {
      seen = options;
      throw new Error("not connecting");
    });
    await connect({ host: "10.0.0.5", port: 5432, database: "app", user, connectTimeoutMs: 1 }).catch(
      () => null,
    );
    return seen!;
  }

  it("logs in as an MD5-proved role with its stored hash, and prefers a configured password", async () => {
    const secrets = new PassthroughSecrets();
    const hash = md5StoredPassword("mallory", "right");
    secrets.remember("mallory", { kind: "md5", hash });
    secrets.remember("app", { kind: "md5", hash: md5StoredPassword("app", "app-secret") });
    expect(await optionsFor("mallory", secrets)).toMatchObject({
      md5Hash: hash,
      password: undefined,
      scramKeys: undefined,
    });
    expect(await optionsFor("app", secrets)).toMatchObject({ password: "app-secret" });
    expect((await optionsFor("nobody", secrets)).md5Hash).toBeUndefined();
  });

  it("logs in as a SCRAM-proved role with its keys and never with a hash", async () => {
    const secrets = new PassthroughSecrets();
    const keys = deriveScramKeys("right", Buffer.alloc(16, 1), 4096);
    secrets.remember("alice", {
      kind: "scram",
      keys: { clientKey: keys.clientKey, serverKey: keys.serverKey },
    });
    const options = await optionsFor("alice", secrets);
    expect(options.scramKeys?.clientKey.equals(keys.clientKey)).toBe(true);
    expect(options.md5Hash).toBeUndefined();
  });
});

describe("trust with passwords that serve backend logins only", () => {
  it("starts, and says once in the log that clients are not asked for those passwords", () => {
    const config = parseConfig(
      `[[topology.regions]]
id = "eu"
home = true
primary = { host = "10.0.0.5", port = 5432, database = "app" }

[routing]
default_placement = { placement = "pinned" }

[auth]
users = [{ name = "app", password = "app-secret" }, { name = "ops" }]
`,
      "t.toml",
    );
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger("warn", sink);
    const security = prepareSecurity(config);
    security.openDoor({
      acquireHome: () => Promise.reject(new Error("unused")),
      homeRegion: "eu",
      cancels: new CancelRegistry(),
      log,
    });
    expect(lines.map((line) => JSON.parse(line) as { msg: string; users: string[] })).toEqual([
      expect.objectContaining({
        users: ["app"],
        msg: expect.stringMatching(/clients are not asked for the passwords/),
      }),
    ]);
    void security.close();
  });
});

describe("the failure throttle", () => {
  it("doubles the delay with each failure from one address up to the maximum, per address", () => {
    const throttle = new FailureThrottle({ baseMs: 100, maxMs: 700, windowMs: 60_000, now: () => 0 });
    expect([1, 2, 3, 4, 5].map(() => throttle.failed("10.0.0.1"))).toEqual([100, 200, 400, 700, 700]);
    expect(throttle.failed("10.0.0.2")).toBe(100);
  });

  it("forgets an address after a quiet window or a success", () => {
    let now = 0;
    const throttle = new FailureThrottle({ baseMs: 100, maxMs: 10_000, windowMs: 1_000, now: () => now });
    throttle.failed("a");
    throttle.failed("a");
    now = 2_001;
    expect(throttle.failed("a")).toBe(100);
    throttle.failed("a");
    throttle.succeeded("a");
    expect(throttle.failures("a")).toBe(0);
    expect(throttle.failed("a")).toBe(100);
  });

  it("keeps at most the configured number of addresses", () => {
    const throttle = new FailureThrottle({
      baseMs: 1,
      maxMs: 1,
      windowMs: 1_000,
      maxAddresses: 2,
      now: () => 0,
    });
    throttle.failed("a");
    throttle.failed("b");
    throttle.failed("c");
    expect(throttle.failures("a")).toBe(0);
    expect(throttle.failures("c")).toBe(1);
  });
});

describe("the verifier store", () => {
  const hash: StoredCredential = { kind: "md5", hash: "md5" + "1".repeat(32) };

  it("asks the home region once per role and TTL, absences included, and shares concurrent lookups", async () => {
    let now = 0;
    const asked: string[] = [];
    const store = new VerifierStore({
      configured: new Map(),
      lookup: async (role) => {
        asked.push(role);
        return role === "known" ? hash : null;
      },
      ttlMs: 1_000,
      now: () => now,
    });
    await Promise.all([store.get("known"), store.get("known"), store.get("ghost")]);
    expect(await store.get("known")).toBe(hash);
    expect(await store.get("ghost")).toBeNull();
    expect(asked).toEqual(["known", "ghost"]);
    now = 1_001;
    await store.get("known");
    expect(asked).toEqual(["known", "ghost", "known"]);
  });

  it("answers configured roles without a lookup", async () => {
    const store = new VerifierStore({
      configured: new Map([["app", hash]]),
      lookup: async () => {
        throw new Error("must not be asked");
      },
      ttlMs: 1_000,
    });
    expect(await store.get("app")).toBe(hash);
  });
});

describe("stored passwords", () => {
  it("reads SCRAM verifiers and MD5 hashes and nothing else", () => {
    expect(parseStoredPassword("md5" + "a".repeat(32))?.kind).toBe("md5");
    expect(parseStoredPassword("plain text")).toBeNull();
    expect(parseStoredPassword(null)).toBeNull();
  });
});

describe("SCRAM-SHA-256-PLUS over TLS", () => {
  const endPoint = createHash("sha256").update("the proxy's certificate").digest();
  const verifier = makeScramVerifier("right", { iterations: 4096 });
  const alice: StoredCredential = { kind: "scram", verifier };

  /** A client-side exchange written out by hand, so the binding data can be chosen. */
  function bound(mechanism: string, header: string, bindingData: Buffer, password: string, role = "alice") {
    const exchange = new LoginExchange(
      role,
      "scram-sha-256",
      role === "alice" ? alice : null,
      secret,
      endPoint,
    );
    const offer = decodeAuthentication(payload(exchange.begin()));
    const clientNonce = "fixedclientnonce";
    const bare = `n=,r=${clientNonce}`;
    const first = exchange.step(
      payload(encodeSASLInitialResponse({ mechanism, data: Buffer.from(`${header}${bare}`) })),
    );
    if (first.kind !== "continue") return { offer, first, last: null };
    const serverFirst = decodeAuthentication(payload(first.send));
    if (isProtocolFault(serverFirst) || serverFirst.type !== "AuthenticationSASLContinue")
      throw new Error("no continue");
    const text = serverFirst.data.toString("utf8");
    const attrs = Object.fromEntries(text.split(",").map((part) => [part[0], part.slice(2)]));
    const keys = deriveScramKeys(password, Buffer.from(attrs.s!, "base64"), Number(attrs.i));
    const withoutProof = `c=${Buffer.concat([Buffer.from(header), bindingData]).toString("base64")},r=${attrs.r}`;
    const signature = createHmac("sha256", keys.storedKey).update(`${bare},${text},${withoutProof}`).digest();
    const proof = Buffer.from(keys.clientKey.map((byte, i) => byte ^ signature[i]!));
    const last = exchange.step(
      payload(encodeSASLResponse({ data: Buffer.from(`${withoutProof},p=${proof.toString("base64")}`) })),
    );
    return { offer, first, last };
  }

  it("offers SCRAM-SHA-256-PLUS first and logs in when the binding matches the certificate", () => {
    const { offer, last } = bound("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,", endPoint, "right");
    expect(isProtocolFault(offer) || offer.type !== "AuthenticationSASL" ? null : offer.mechanisms).toEqual([
      "SCRAM-SHA-256-PLUS",
      "SCRAM-SHA-256",
    ]);
    expect(last?.kind).toBe("ok");
  });

  it("refuses binding data of another certificate (a man in the middle) with 08P01", () => {
    const { last } = bound("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,", Buffer.alloc(32), "right");
    expect(last?.kind === "fail" ? last.error.code : null).toBe("08P01");
  });

  it("refuses the y flag, since -PLUS was offered and someone must have removed it", () => {
    const { first } = bound("SCRAM-SHA-256", "y,,", Buffer.alloc(0), "right");
    expect(first.kind === "fail" ? first.error.code : null).toBe("08P01");
  });

  it("still accepts plain SCRAM-SHA-256 over TLS, and fails a wrong password or unknown role with 28P01", () => {
    expect(bound("SCRAM-SHA-256", "n,,", Buffer.alloc(0), "right").last?.kind).toBe("ok");
    const wrong = bound("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,", endPoint, "wrong").last;
    const ghost = bound("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,", endPoint, "wrong", "ghost").last;
    expect(wrong?.kind === "fail" ? wrong.error.code : null).toBe("28P01");
    expect(ghost?.kind === "fail" ? ghost.error.code : null).toBe("28P01");
  });
});

describe("tls-server-end-point", () => {
  it("hashes a certificate signed with ECDSA-SHA256 with SHA-256 and one signed with SHA-384 with SHA-384", () => {
    const signedWith = (oid: number[]) => {
      // SEQUENCE { tbs SEQUENCE {}, SEQUENCE { OID }, BIT STRING }
      const oidBytes = Buffer.from(oid);
      const algorithm = Buffer.concat([
        Buffer.from([0x30, oidBytes.length + 2, 0x06, oidBytes.length]),
        oidBytes,
      ]);
      const body = Buffer.concat([Buffer.from([0x30, 0x00]), algorithm, Buffer.from([0x03, 0x01, 0x00])]);
      return Buffer.concat([Buffer.from([0x30, body.length]), body]);
    };
    const ecdsaSha256 = signedWith([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
    const ecdsaSha384 = signedWith([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03]);
    expect(tlsServerEndPoint(ecdsaSha256)).toEqual(createHash("sha256").update(ecdsaSha256).digest());
    expect(tlsServerEndPoint(ecdsaSha384)).toEqual(createHash("sha384").update(ecdsaSha384).digest());
  });
});
