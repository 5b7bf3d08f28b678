import { describe, expect, it } from "vitest";
import {
  deriveScramKeys,
  formatScramVerifier,
  isScramFailure,
  makeScramVerifier,
  parseScramVerifier,
  SCRAM_SHA_256,
  ScramClient,
  ScramFailureReason,
  ScramServer,
  type ScramServerStep,
  SqlState,
  saslPrep,
} from "../src/index.js";

// RFC 7677 section 3.
const rfc = {
  password: "pencil",
  clientNonce: "rOprNGfwEbeRWgbNEkqO",
  serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
  salt: Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64"),
  clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
  serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
  clientFinal:
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
  // Derived independently (Python hashlib) from the same password and salt.
  storedKey: "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=",
  serverKey: "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=",
};
const rfcVerifier = `SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$${rfc.storedKey}:${rfc.serverKey}`;

function ok(step: ScramServerStep): Buffer {
  if (!step.ok) throw new Error(step.failure.message);
  return step.message;
}

function rfcServer(): ScramServer {
  return new ScramServer(parseScramVerifier(rfcVerifier)!, { serverNonce: rfc.serverNonce });
}

describe("SCRAM-SHA-256 against the RFC 7677 test vector", () => {
  it("the client produces exactly the RFC's messages", () => {
    const client = new ScramClient({ password: rfc.password }, { nonce: rfc.clientNonce, username: "user" });
    expect(client.clientFirst().toString()).toBe(rfc.clientFirst);
    expect(String(client.serverFirst(rfc.serverFirst))).toBe(rfc.clientFinal);
    expect(client.serverFinal(rfc.serverFinal)).toBeNull();
    expect(client.serverVerified).toBe(true);
  });

  it("the server produces exactly the RFC's messages from the stored verifier", () => {
    const server = rfcServer();
    expect(ok(server.clientFirst(rfc.clientFirst)).toString()).toBe(rfc.serverFirst);
    const final = server.clientFinal(rfc.clientFinal);
    if (!final.ok) throw new Error(final.failure.message);
    expect(final.message.toString()).toBe(rfc.serverFinal);
    expect(final.clientKey.length).toBe(32);
  });

  it("the verifier made from the password is the one derived independently", () => {
    expect(formatScramVerifier(makeScramVerifier(rfc.password, { salt: rfc.salt, iterations: 4096 }))).toBe(
      rfcVerifier,
    );
  });
});

describe("stored verifiers", () => {
  it("parse and format back to the same text", () => {
    const v = parseScramVerifier(rfcVerifier);
    expect(v?.iterations).toBe(4096);
    expect(formatScramVerifier(v!)).toBe(rfcVerifier);
  });

  it("are refused when not a SCRAM-SHA-256 verifier", () => {
    for (const text of [
      "md5d1f3b0b2fa3f1c2fc6f4f0f2b1c6d2a1",
      "plain password",
      "SCRAM-SHA-256$0:W22ZaJ0SNY7soEsUEjb6gQ==$" + `${rfc.storedKey}:${rfc.serverKey}`,
      `SCRAM-SHA-256$4096:W2!Z$${rfc.storedKey}:${rfc.serverKey}`,
      `SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$${rfc.storedKey}:AAAA`,
      `SCRAM-SHA-1$4096:W22ZaJ0SNY7soEsUEjb6gQ==$${rfc.storedKey}:${rfc.serverKey}`,
    ]) {
      expect(parseScramVerifier(text), text).toBeNull();
    }
  });

  it("use a fresh 16-byte salt and 4096 iterations by default", () => {
    const a = makeScramVerifier("secret");
    const b = makeScramVerifier("secret");
    expect(a.salt.length).toBe(16);
    expect(a.iterations).toBe(4096);
    expect(a.salt.equals(b.salt)).toBe(false);
  });
});

describe("a full exchange", () => {
  const verifier = makeScramVerifier("correct horse", { iterations: 1024 });

  function login(client: ScramClient, server: ScramServer) {
    const serverFirst = ok(server.clientFirst(client.clientFirst()));
    const clientFinal = client.serverFirst(serverFirst);
    if (isScramFailure(clientFinal)) return { client: clientFinal };
    const final = server.clientFinal(clientFinal);
    if (!final.ok) return { server: final.failure };
    return { done: client.serverFinal(final.message), clientKey: final.clientKey };
  }

  it("succeeds with the right password and hands the server the ClientKey", () => {
    const client = new ScramClient({ password: "correct horse" });
    const result = login(client, new ScramServer(verifier));
    expect(result.done).toBeNull();
    expect(result.clientKey).toEqual(client.keys?.clientKey);
  });

  it("fails with a wrong password as 28P01", () => {
    const result = login(new ScramClient({ password: "wrong" }), new ScramServer(verifier));
    expect(result.server?.reason).toBe(ScramFailureReason.invalidProof);
    expect(result.server?.code).toBe(SqlState.invalid_password);
  });

  it("lets a ClientKey captured from one login log in to another server holding the same verifier", () => {
    const captured = login(new ScramClient({ password: "correct horse" }), new ScramServer(verifier))
      .clientKey!;
    const passthrough = new ScramClient({ clientKey: captured, serverKey: verifier.serverKey });
    expect(login(passthrough, new ScramServer(verifier)).done).toBeNull();
    expect(passthrough.serverVerified).toBe(true);
  });

  it("with a ClientKey but no ServerKey logs in without claiming the server was verified", () => {
    const captured = login(new ScramClient({ password: "correct horse" }), new ScramServer(verifier))
      .clientKey!;
    const passthrough = new ScramClient({ clientKey: captured });
    expect(login(passthrough, new ScramServer(verifier)).done).toBeNull();
    expect(passthrough.serverVerified).toBe(false);
  });

  it("detects a server that does not hold the verifier", () => {
    const impostor = { ...verifier, serverKey: Buffer.alloc(32, 1) };
    const result = login(new ScramClient({ password: "correct horse" }), new ScramServer(impostor));
    expect(isScramFailure(result.done) && result.done.reason).toBe(ScramFailureReason.invalidServerSignature);
  });

  it("refuses an unknown role exactly like a wrong password, with a stable salt", () => {
    const first = ScramServer.forUnknownRole("ghost", Buffer.from("secret"));
    const again = ScramServer.forUnknownRole("ghost", Buffer.from("secret"));
    const saltOf = (s: ScramServer) => ok(s.clientFirst("n,,n=,r=abc")).toString().split(",")[1];
    expect(saltOf(first)).toBe(saltOf(again));
    const result = login(
      new ScramClient({ password: "anything" }),
      ScramServer.forUnknownRole("ghost", Buffer.from("secret")),
    );
    expect(result.server?.reason).toBe(ScramFailureReason.invalidProof);
  });
});

describe("server-side message rules", () => {
  it("refuses a channel binding request, since no -PLUS mechanism is offered", () => {
    const step = rfcServer().clientFirst("p=tls-server-end-point,,n=,r=abc");
    expect(!step.ok && step.failure.reason).toBe(ScramFailureReason.unsupported);
  });

  it("accepts the 'y' flag (client could bind, believes the server cannot)", () => {
    const server = new ScramServer(parseScramVerifier(rfcVerifier)!, { serverNonce: "srv" });
    expect(server.clientFirst("y,,n=,r=abc").ok).toBe(true);
    const final = server.clientFinal(`c=biws,r=abcsrv,p=${Buffer.alloc(32).toString("base64")}`);
    expect(!final.ok && final.failure.reason).toBe(ScramFailureReason.unsupported);
  });

  it("refuses an authorization identity and mandatory extensions", () => {
    const authzid = rfcServer().clientFirst("n,a=admin,n=,r=abc");
    const extension = rfcServer().clientFirst("n,,m=ext,n=,r=abc");
    expect(!authzid.ok && authzid.failure.reason).toBe(ScramFailureReason.unsupported);
    expect(!extension.ok && extension.failure.reason).toBe(ScramFailureReason.unsupported);
  });

  it("refuses malformed client-first messages", () => {
    for (const text of ["", "n", "n,,", "x,,n=,r=abc", "n,,r=abc", "n,,n=,r=", "n,,n=,r=a\u0001b"]) {
      const step = rfcServer().clientFirst(text);
      expect(step.ok, JSON.stringify(text)).toBe(false);
    }
  });

  it("refuses a client-final whose nonce is not the agreed one", () => {
    const server = rfcServer();
    server.clientFirst(rfc.clientFirst);
    const tampered = rfc.clientFinal.replace("hNlF$k0", "hNlF$k1");
    const final = server.clientFinal(tampered);
    expect(!final.ok && final.failure.reason).toBe(ScramFailureReason.nonceMismatch);
  });

  it("refuses channel-binding data that does not repeat the GS2 header", () => {
    const server = rfcServer();
    server.clientFirst(rfc.clientFirst);
    const final = server.clientFinal(rfc.clientFinal.replace("c=biws", "c=eSws"));
    expect(!final.ok && final.failure.reason).toBe(ScramFailureReason.unsupported);
  });

  it("refuses a proof that is not 32 bytes", () => {
    const server = rfcServer();
    server.clientFirst(rfc.clientFirst);
    const final = server.clientFinal(rfc.clientFinal.replace(/p=.*$/, "p=AAAA"));
    expect(!final.ok && final.failure.reason).toBe(ScramFailureReason.malformed);
  });

  it("refuses steps out of order, and a second attempt on a finished exchange", () => {
    const server = rfcServer();
    const early = server.clientFinal(rfc.clientFinal);
    expect(!early.ok && early.failure.reason).toBe(ScramFailureReason.outOfOrder);
    const again = rfcServer();
    again.clientFirst(rfc.clientFirst);
    expect(again.clientFinal(rfc.clientFinal).ok).toBe(true);
    const replay = again.clientFinal(rfc.clientFinal);
    expect(!replay.ok && replay.failure.reason).toBe(ScramFailureReason.outOfOrder);
  });
});

describe("client-side message rules", () => {
  function started(): ScramClient {
    const client = new ScramClient({ password: rfc.password }, { nonce: rfc.clientNonce });
    client.clientFirst();
    return client;
  }

  it("refuses a server nonce that does not extend the client's", () => {
    const other = started().serverFirst("r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
    const same = started().serverFirst(`r=${rfc.clientNonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`);
    expect(isScramFailure(other) && other.reason).toBe(ScramFailureReason.nonceMismatch);
    expect(isScramFailure(same) && same.reason).toBe(ScramFailureReason.nonceMismatch);
  });

  it("refuses iteration counts of zero or above its limit", () => {
    const zero = started().serverFirst(`r=${rfc.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0`);
    const huge = started().serverFirst(`r=${rfc.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=2000000000`);
    expect(isScramFailure(zero)).toBe(true);
    expect(isScramFailure(huge)).toBe(true);
  });

  it("refuses malformed server-first messages", () => {
    for (const text of [
      "",
      "r=x",
      `r=${rfc.clientNonce}x,s=***,i=1`,
      `r=${rfc.clientNonce}x,s=AAAA,i=abc`,
      "m=ext,r=a,s=b,i=1",
    ]) {
      expect(isScramFailure(started().serverFirst(text)), text).toBe(true);
    }
  });

  it("reports an error the server sends in server-final", () => {
    const client = started();
    client.serverFirst(rfc.serverFirst);
    const result = client.serverFinal("e=invalid-proof");
    expect(isScramFailure(result) && result.reason).toBe(ScramFailureReason.serverError);
  });

  it("refuses server-final before client-final", () => {
    const result = started().serverFinal(rfc.serverFinal);
    expect(isScramFailure(result) && result.reason).toBe(ScramFailureReason.outOfOrder);
  });

  it("names its mechanism", () => {
    expect(new ScramClient({ password: "x" }).mechanism).toBe(SCRAM_SHA_256);
  });
});

describe("SASLprep of passwords", () => {
  it("leaves ASCII passwords alone, control characters included", () => {
    expect(saslPrep("p\u0007ss word")).toBe("p\u0007ss word");
  });

  it("maps non-ASCII spaces to spaces, drops soft hyphens and normalizes with NFKC", () => {
    expect(saslPrep("a\u00a0b")).toBe("a b");
    expect(saslPrep("I\u00adX")).toBe("IX");
    expect(saslPrep("\u2168")).toBe("IX");
    expect(deriveScramKeys("a\u00a0b", rfc.salt, 16).clientKey).toEqual(
      deriveScramKeys("a b", rfc.salt, 16).clientKey,
    );
  });

  it("falls back to the raw password when the prepared one has a prohibited character", () => {
    expect(saslPrep("é\u0007")).toBe("é\u0007");
    expect(saslPrep("é\u{e000}")).toBe("é\u{e000}");
  });
});
