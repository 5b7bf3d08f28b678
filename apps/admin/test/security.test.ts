import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  AdminError,
  DASHBOARD_SCRIPT,
  isLoopbackHost,
  ProxyMetrics,
  type RunningAdminServer,
  startAdminServer,
} from "../src/index.js";
import { passwordFromHeader } from "../src/server/password-gate.js";
import { FakeSource, REGIONS } from "./fake-source.js";
import { basic, get } from "./http.js";
import { selfSignedCertificate } from "./tls-fixture.js";

const running: RunningAdminServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

function parts(): { metrics: ProxyMetrics; source: FakeSource } {
  const metrics = new ProxyMetrics({
    node: "geo-test",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics: false,
  });
  return { metrics, source: new FakeSource(metrics) };
}

async function start(
  options: Partial<Parameters<typeof startAdminServer>[0]> = {},
): Promise<RunningAdminServer> {
  const server = await startAdminServer({ host: "127.0.0.1", port: 0, ...parts(), ...options });
  running.push(server);
  return server;
}

async function startError(options: Partial<Parameters<typeof startAdminServer>[0]>): Promise<AdminError> {
  try {
    await start(options);
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error("the admin server started");
}

describe("starting the admin port", () => {
  it("refuses to listen beyond loopback without a password, naming the fix", async () => {
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "admin.example"]) {
      const error = await startError({ host });
      expect(error.code, host).toBe("ADMIN_PASSWORD_REQUIRED");
      expect(error.hint).toContain("[admin] password");
    }
  });

  it("listens beyond loopback when a password is set", async () => {
    const server = await start({ host: "0.0.0.0", password: "s3cret" });
    expect((await get(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(401);
  });

  it("refuses an empty password, an invalid port and half a TLS pair", async () => {
    expect((await startError({ password: "" })).code).toBe("ADMIN_PASSWORD_EMPTY");
    expect((await startError({ port: 70_000 })).code).toBe("ADMIN_PORT_INVALID");
    expect((await startError({ tls: { cert: "x", key: "" } })).code).toBe("ADMIN_TLS_INCOMPLETE");
    const noCert = await startError({ tls: { key: "x" } });
    expect(noCert.code).toBe("ADMIN_TLS_INCOMPLETE");
    expect(noCert.message).toContain("the cert is missing");
  });

  it("says which address could not be listened on", async () => {
    const first = await start();
    const error = await startError({ port: first.port });
    expect(error.code).toBe("ADMIN_LISTEN_FAILED");
    expect(error.message).toContain(`127.0.0.1:${first.port}`);
  });

  it("counts 127.0.0.0/8, ::1 and localhost as loopback and nothing else", () => {
    for (const host of ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.1", "localhost.example", "::ffff:10.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe("the admin password", () => {
  it("takes HTTP Basic with any user name, or a bearer token, and challenges without either", async () => {
    const server = await start({ password: "s3cret" });
    const none = await get(`${server.url}/snapshot`);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Basic realm="geoproxy admin", charset="UTF-8"');
    expect((await get(`${server.url}/snapshot`, { headers: basic("s3cret", "anyone") })).status).toBe(200);
    expect(
      (await get(`${server.url}/snapshot`, { headers: { authorization: "Bearer s3cret" } })).status,
    ).toBe(200);
    expect((await get(`${server.url}/snapshot`, { headers: { authorization: "Bearer s3cre" } })).status).toBe(
      401,
    );
    expect((await get(`${server.url}/events-nope`, { headers: basic("wrong") })).status).toBe(401);
  });

  it("reads the password out of Basic and Bearer headers and nothing else", () => {
    expect(passwordFromHeader(`Basic ${Buffer.from("u:p:with:colons").toString("base64")}`)).toBe(
      "p:with:colons",
    );
    expect(passwordFromHeader("bearer tok")).toBe("tok");
    expect(passwordFromHeader(`Basic ${Buffer.from("nocolon").toString("base64")}`)).toBeUndefined();
    expect(passwordFromHeader("Digest x")).toBeUndefined();
    expect(passwordFromHeader("Bearer ")).toBeUndefined();
  });

  it("locks an address out after repeated wrong answers, doubling each time, while others still get in", async () => {
    let now = 1_000_000;
    const server = await start({ password: "s3cret", now: () => now });
    const url = `${server.url}/healthz`;
    const wrong = basic("guess");
    const right = basic("s3cret");
    for (let i = 0; i < 3; i++) expect((await get(url, { headers: wrong })).status).toBe(401);
    expect((await get(url, { headers: right })).status).toBe(200);

    for (let i = 0; i < 3; i++) expect((await get(url, { headers: wrong })).status).toBe(401);
    expect((await get(url, { headers: wrong })).status).toBe(401); // fourth wrong answer: locked for 1 s
    const locked = await get(url, { headers: right });
    expect(locked.status).toBe(429);
    expect(locked.headers["retry-after"]).toBe("1");
    expect((await get(url, { headers: right, localAddress: "127.0.0.2" })).status).toBe(200);

    now += 999;
    expect((await get(url, { headers: right })).status).toBe(429);
    now += 1;
    expect((await get(url, { headers: wrong })).status).toBe(401); // fifth: locked for 2 s
    now += 1_999;
    expect((await get(url, { headers: right })).status).toBe(429);
    now += 1;
    expect((await get(url, { headers: wrong })).status).toBe(401); // sixth: locked for 4 s
    const longer = await get(url, { headers: right });
    expect(longer.status).toBe(429);
    expect(longer.headers["retry-after"]).toBe("4");
    now += 4_000;
    expect((await get(url, { headers: right })).status).toBe(200);

    // A right answer forgives: three wrong answers are free again.
    for (let i = 0; i < 3; i++) expect((await get(url, { headers: wrong })).status).toBe(401);
    expect((await get(url, { headers: right })).status).toBe(200);
  });

  it("caps the lock at its longest and forgets an address after a quiet day", async () => {
    let now = 0;
    const server = await start({
      password: "s3cret",
      now: () => now,
      lockout: { maxLockMs: 5_000, forgetAfterMs: 60_000 },
    });
    const url = `${server.url}/healthz`;
    for (let i = 0; i < 10; i++) {
      await get(url, { headers: basic("guess") });
      now += 10_000;
    }
    await get(url, { headers: basic("guess") });
    now += 4_999;
    expect((await get(url, { headers: basic("s3cret") })).status).toBe(429);
    now += 60_000;
    // Forgotten: three wrong answers are free again instead of each locking for the longest.
    for (let i = 0; i < 3; i++) expect((await get(url, { headers: basic("guess") })).status).toBe(401);
    expect((await get(url, { headers: basic("s3cret") })).status).toBe(200);
  });
});

describe("the Content-Security-Policy", () => {
  it("allows exactly the page's inline script by its sha256, and no other script source", async () => {
    const server = await start();
    const answer = await get(`${server.url}/`);
    const csp = String(answer.headers["content-security-policy"]);
    const scripts = [...answer.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? "");
    expect(scripts).toEqual([DASHBOARD_SCRIPT]);
    const { createHash } = await import("node:crypto");
    const hash = createHash("sha256")
      .update(scripts[0] ?? "", "utf8")
      .digest("base64");
    const scriptSrc = csp.split("; ").find((d) => d.startsWith("script-src "));
    expect(scriptSrc).toBe(`script-src 'sha256-${hash}'`);
    expect(csp).toContain("default-src 'none'");
    const styles = [...answer.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1] ?? "");
    const styleHash = createHash("sha256")
      .update(styles[0] ?? "", "utf8")
      .digest("base64");
    expect(csp).toContain(`style-src 'sha256-${styleHash}'`);
    expect(answer.body).not.toMatch(/\son[a-z]+=/);
    expect(answer.body).not.toMatch(/\sstyle=/);
  });
});

describe("HTTPS", () => {
  const tls = selfSignedCertificate();

  it("serves every endpoint over TLS with the given certificate", async () => {
    const server = await start({ tls, password: "s3cret" });
    expect(server.url).toMatch(/^https:/);
    const answer = await get(`${server.url}/healthz`, { ca: tls.cert, headers: basic("s3cret") });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-security-policy"]).toBeDefined();
  });

  it("gives a plain-HTTP request on the TLS port no answer in the clear", async () => {
    const server = await start({ tls });
    const received = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.on("connect", () => socket.write("GET /snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks)));
      socket.setTimeout(5_000, () => socket.destroy(new Error("the server kept a plain connection open")));
    });
    expect(received.toString("latin1")).not.toContain("HTTP/");
    expect(received.length).toBe(0);
  });
});
