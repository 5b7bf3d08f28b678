import { execFile, execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { MemoryDirectory, parseConfig } from "@geo/core";
import {
  BackendFramer,
  decodeBackendMessage,
  encodeCancelRequest,
  encodeQuery,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  encodeStartupMessage,
  formatScramVerifier,
  isProtocolFault,
  makeScramVerifier,
  SCRAM_SHA_256,
  ScramClient,
} from "@geo/proto";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, StartupError, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

const run = promisify(execFile);
const PSQL = existsSync("/usr/lib/postgresql/15/bin/psql") ? "/usr/lib/postgresql/15/bin/psql" : "psql";

const ALICE_PASSWORD = "alice-secret";
const BOB_PASSWORD = "bob-secret";

interface Certificates {
  readonly ca: string;
  /** Names only `localhost`: what the backends present. */
  readonly backendCert: string;
  readonly backendKey: string;
  /** Names `localhost` and 127.0.0.1: what the proxy presents to its clients. */
  readonly proxyCert: string;
  readonly proxyKey: string;
}

/** A throwaway CA, a backend certificate and a proxy certificate, made with the openssl CLI. */
function makeCertificates(dir: string): Certificates {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=geo test CA",
  );
  for (const [name, san] of [
    ["backend", "DNS:localhost"],
    ["proxy", "DNS:localhost,IP:127.0.0.1"],
  ] as const) {
    openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", "/CN=localhost");
    writeFileSync(join(dir, `${name}.cnf`), `subjectAltName=${san}\n`);
    openssl(
      ...["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"],
      ...["-out", `${name}.crt`, "-days", "2", "-extfile", `${name}.cnf`],
    );
  }
  return {
    ca: join(dir, "ca.crt"),
    backendCert: join(dir, "backend.crt"),
    backendKey: join(dir, "backend.key"),
    proxyCert: join(dir, "proxy.crt"),
    proxyKey: join(dir, "proxy.key"),
  };
}

/** PostgreSQL runs as `postgres` (we are root) and refuses a key file others can read. */
function handToPostgres(dir: string, files: string[]): void {
  if (process.getuid?.() !== 0) return;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o755);
  for (const file of files) {
    chownSync(file, uid, gid);
    chmodSync(file, 0o600);
  }
}

let dir: string;
let certs: Certificates;
let cluster: PgCluster;
/** SCRAM-only backends, passthrough, TLS both ways, roles looked up in pg_authid. */
let scramProxy: RunningProxy;
/** MD5 where the role's stored secret is an MD5 hash, TLS required from clients. */
let md5Proxy: RunningProxy;
const delays: number[] = [];

/** Several proxies of this file run at once over one server: each needs its own node name. */
let nodes = 0;

function toml(port: number, extra: string, host = "localhost"): string {
  return `[server]
host = "127.0.0.1"
port = 0
node = "security-${++nodes}"

[[topology.regions]]
id = "eu"
home = true
primary = { host = "${host}", port = ${port}, database = "postgres", user = "postgres" }

[routing]
default_placement = { placement = "pinned" }
${txnSection()}
${extra}`;
}

async function start(text: string): Promise<RunningProxy> {
  return startProxy({
    config: parseConfig(text, "security.toml"),
    directory: new MemoryDirectory(),
    logLevel: (process.env.GEO_LOG as "silent") ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
    security: {
      sleep: async (ms) => {
        delays.push(ms);
      },
    },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "geo-security-"));
  certs = makeCertificates(dir);
  handToPostgres(dir, [certs.backendCert, certs.backendKey]);
  // The same verifier text in every region: a ClientKey proved to the proxy opens each of them.
  const alice = formatScramVerifier(makeScramVerifier(ALICE_PASSWORD));
  const bob = formatScramVerifier(makeScramVerifier(BOB_PASSWORD));
  cluster = await startCluster({
    settings: { ssl: "on", ssl_cert_file: certs.backendCert, ssl_key_file: certs.backendKey },
    hba: ["hostssl all alice,bob 127.0.0.1/32 scram-sha-256", "host all alice,bob 127.0.0.1/32 reject"],
    initSql: `
      CREATE ROLE alice LOGIN PASSWORD '${alice}';
      CREATE ROLE bob LOGIN PASSWORD '${bob}';
      SET password_encryption = 'md5';
      CREATE ROLE mallory LOGIN PASSWORD 'mallory-secret';
      CREATE TABLE notes (owner text NOT NULL, body text NOT NULL);
      INSERT INTO notes VALUES ('alice', 'alice note'), ('bob', 'bob note');
      ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
      CREATE POLICY own_notes ON notes USING (owner = current_user);
      GRANT SELECT ON notes TO alice, bob;
    `,
  });
  const port = cluster.servers[0]!.port;
  scramProxy = await start(
    toml(
      port,
      `[auth]
method = "scram-sha-256"
passthrough = true

[tls]
cert = "${certs.proxyCert}"
key = "${certs.proxyKey}"
backend_sslmode = "verify-full"
backend_ca = "${certs.ca}"
`,
    ),
  );
  md5Proxy = await start(
    toml(
      port,
      `[auth]
method = "md5"

[tls]
cert = "${certs.proxyCert}"
key = "${certs.proxyKey}"
require_client_tls = true
`,
    ),
  );
}, 60_000);

afterAll(async () => {
  await scramProxy?.close({ timeoutMs: 200 });
  await md5Proxy?.close({ timeoutMs: 200 });
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function psql(
  proxy: RunningProxy,
  user: string,
  password: string,
  sql: string,
  ssl = `sslmode=verify-full sslrootcert=${certs?.ca}`,
): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(
      PSQL,
      [`host=127.0.0.1 port=${proxy.port} dbname=postgres user=${user} ${ssl}`, "-X", "-At", "-c", sql],
      { env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: "10" }, timeout: 20_000 },
    );
    return { ok: true, out: stdout.trim() };
  } catch (error) {
    return { ok: false, out: String((error as { stderr?: string }).stderr ?? error) };
  }
}

async function pgError(config: pg.ClientConfig): Promise<{ code?: string; message: string }> {
  const client = new pg.Client(config);
  try {
    await client.connect();
    await client.end();
    return { message: "connected" };
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

/** Every byte the proxy sends on a raw socket until it closes it. */
function readUntilClosed(socket: Socket, timeoutMs = 5_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error("the proxy kept the connection open")), timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

function rawConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

function sslRequest(): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeInt32BE(8, 0);
  bytes.writeInt32BE(80877103, 4);
  return bytes;
}

function gssencRequest(): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeInt32BE(8, 0);
  bytes.writeInt32BE(80877104, 4);
  return bytes;
}

describe("TLS to clients", () => {
  it("serves psql with sslmode=verify-full and sslmode=require, and reaches the backend over verified TLS", async () => {
    const full = await psql(
      scramProxy,
      "alice",
      ALICE_PASSWORD,
      "SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    );
    expect(full).toEqual({ ok: true, out: "alice|t" });
    const required = await psql(scramProxy, "bob", BOB_PASSWORD, "SELECT current_user", "sslmode=require");
    expect(required).toEqual({ ok: true, out: "bob" });
  });

  it("offers SCRAM-SHA-256-PLUS over TLS: psql with channel_binding=require logs in, and in clear it cannot", async () => {
    const bound = await psql(
      scramProxy,
      "alice",
      ALICE_PASSWORD,
      "SELECT current_user",
      "sslmode=require channel_binding=require",
    );
    expect(bound).toEqual({ ok: true, out: "alice" });
    const plain = await psql(
      scramProxy,
      "alice",
      ALICE_PASSWORD,
      "SELECT 1",
      "sslmode=disable channel_binding=require",
    );
    expect(plain.ok).toBe(false);
    expect(plain.out).toMatch(/channel binding/);
  });

  it("serves node-postgres verifying the certificate and postgres.js with ssl required", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: scramProxy.port,
      user: "alice",
      password: ALICE_PASSWORD,
      database: "postgres",
      ssl: { ca: readFileSync(certs.ca), servername: "localhost" },
    });
    await client.connect();
    expect((await client.query("SELECT current_user AS who")).rows).toEqual([{ who: "alice" }]);
    await client.end();
    const sql = postgres({
      host: "127.0.0.1",
      port: scramProxy.port,
      user: "bob",
      password: BOB_PASSWORD,
      database: "postgres",
      ssl: "require",
      max: 1,
    });
    expect(await sql`SELECT current_user AS who`).toEqual([{ who: "bob" }]);
    await sql.end();
  });

  it("refuses a client that does not ask for TLS when TLS is required (28000)", async () => {
    const refused = await pgError({
      host: "127.0.0.1",
      port: md5Proxy.port,
      user: "mallory",
      password: "mallory-secret",
      database: "postgres",
    });
    expect(refused.code).toBe("28000");
    const plain = await psql(md5Proxy, "mallory", "mallory-secret", "SELECT 1", "sslmode=disable");
    expect(plain.ok).toBe(false);
  });

  it("closes a connection that sends bytes after its SSLRequest before the handshake (CVE-2021-23214)", async () => {
    const socket = await rawConnect(scramProxy.port);
    const answer = readUntilClosed(socket);
    socket.write(
      Buffer.concat([
        sslRequest(),
        encodeStartupMessage({ protocolVersion: 196608, parameters: { user: "alice" } }),
      ]),
    );
    const bytes = await answer;
    expect(bytes[0]).toBe(0x45); // 'E', never 'S'
    expect(bytes.toString("latin1")).toContain("08P01");
  });

  it("answers GSSENCRequest with N and then still accepts an SSLRequest", async () => {
    const socket = await rawConnect(scramProxy.port);
    const first = new Promise<Buffer>((resolve) => socket.once("data", resolve));
    socket.write(gssencRequest());
    expect((await first).toString("latin1")).toBe("N");
    const second = new Promise<Buffer>((resolve) => socket.once("data", resolve));
    socket.write(sslRequest());
    expect((await second).toString("latin1")).toBe("S");
    socket.destroy();
  });

  it("accepts direct TLS with ALPN postgresql and logs in over it", async () => {
    const rows = await directTlsQuery(
      scramProxy.port,
      ["postgresql"],
      "alice",
      ALICE_PASSWORD,
      "SELECT current_user",
    );
    expect(rows).toEqual(["alice"]);
  });

  it("closes direct TLS that does not offer ALPN postgresql", async () => {
    await expect(directTlsQuery(scramProxy.port, [], "alice", ALICE_PASSWORD, "SELECT 1")).rejects.toThrow();
  });
});

describe("SCRAM and MD5 authentication of clients", () => {
  it("fails a wrong password and an unknown role the same way: 28P01 and the same message", async () => {
    const base = {
      host: "127.0.0.1",
      port: scramProxy.port,
      database: "postgres",
      ssl: { ca: readFileSync(certs.ca), servername: "localhost" },
    };
    const wrong = await pgError({ ...base, user: "alice", password: "not-it" });
    const unknown = await pgError({ ...base, user: "nobody_here", password: "not-it" });
    expect(wrong.code).toBe("28P01");
    expect(unknown.code).toBe("28P01");
    expect(wrong.message.replace("alice", "<role>")).toBe(unknown.message.replace("nobody_here", "<role>"));
    // The role is bound as a parameter of the verifier query, never spliced into its text.
    const injected = await pgError({ ...base, user: "alice' OR '1'='1", password: "not-it" });
    expect(injected.code).toBe("28P01");
  });

  it("runs the whole SCRAM exchange for an unknown role, with a stable salt, before failing", async () => {
    const first = await scramFirst(scramProxy.port, "nobody_here");
    const again = await scramFirst(scramProxy.port, "nobody_here");
    const known = await scramFirst(scramProxy.port, "alice");
    const salt = (text: string) => /s=([^,]+)/.exec(text)?.[1];
    expect(salt(first)).toBeDefined();
    expect(salt(first)).toBe(salt(again));
    expect(/i=(\d+)/.exec(first)?.[1]).toBe(/i=(\d+)/.exec(known)?.[1]);
  });

  it("slows down repeated failures from one address with a growing delay, and forgets them after a success", async () => {
    // A success first: earlier tests failed from this address too.
    expect((await psql(scramProxy, "bob", BOB_PASSWORD, "SELECT 1")).ok).toBe(true);
    delays.length = 0;
    for (let i = 0; i < 3; i++) {
      const failed = await psql(scramProxy, "bob", "wrong", "SELECT 1");
      expect(failed.ok).toBe(false);
      expect(failed.out).toContain("password authentication failed");
    }
    expect(delays).toEqual([250, 500, 1000]);
    expect((await psql(scramProxy, "bob", BOB_PASSWORD, "SELECT 1")).ok).toBe(true);
    await psql(scramProxy, "bob", "wrong", "SELECT 1");
    expect(delays.at(-1)).toBe(250);
  });

  it("accepts MD5 for a role whose stored secret is an MD5 hash, and SCRAM for one stored as SCRAM", async () => {
    const ssl = `sslmode=verify-full sslrootcert=${certs.ca}`;
    expect(await psql(md5Proxy, "mallory", "mallory-secret", "SELECT 1", ssl)).toEqual({
      ok: true,
      out: "1",
    });
    const wrong = await psql(md5Proxy, "mallory", "nope", "SELECT 1", ssl);
    expect(wrong.out).toContain('password authentication failed for user "mallory"');
    expect(await psql(md5Proxy, "alice", ALICE_PASSWORD, "SELECT 1", ssl)).toEqual({ ok: true, out: "1" });
  });

  it("refuses to start with trust beyond loopback, and passthrough under trust", async () => {
    const port = cluster.servers[0]!.port;
    await expect(
      startProxy({
        config: parseConfig(toml(port, ""), "t.toml"),
        host: "0.0.0.0",
        port: 0,
        logLevel: "silent",
      }),
    ).rejects.toThrow(/trust/);
    await expect(
      startProxy({
        config: parseConfig(toml(port, `[auth]\nmethod = "trust"\npassthrough = true\n`), "t.toml"),
        port: 0,
        logLevel: "silent",
      }),
    ).rejects.toThrow(/auth\.passthrough needs auth\.method = "scram-sha-256" or "md5"/);
  });
});

describe("passthrough and TLS to backends", () => {
  it("logs in to the backend as the client's own role, so row-level security applies", async () => {
    expect(await psql(scramProxy, "alice", ALICE_PASSWORD, "SELECT body FROM notes")).toEqual({
      ok: true,
      out: "alice note",
    });
    expect(await psql(scramProxy, "bob", BOB_PASSWORD, "SELECT body FROM notes")).toEqual({
      ok: true,
      out: "bob note",
    });
  });

  it("does not start when a backend's certificate does not name the host under verify-full", async () => {
    const port = cluster.servers[0]!.port;
    const text = toml(
      port,
      `[tls]\nbackend_sslmode = "verify-full"\nbackend_ca = "${certs.ca}"\n`,
      "127.0.0.1",
    );
    const error = await startProxy({ config: parseConfig(text, "t.toml"), port: 0, logLevel: "silent" }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(String((error as Error).message)).toMatch(/TLS to 127\.0\.0\.1.*verify-full/);
  });

  it("reaches a backend with verify-ca whatever host name its certificate carries", async () => {
    const port = cluster.servers[0]!.port;
    const text = toml(
      port,
      `[tls]\nbackend_sslmode = "verify-ca"\nbackend_ca = "${certs.ca}"\n`,
      "127.0.0.1",
    );
    const proxy = await startProxy({ config: parseConfig(text, "t.toml"), port: 0, logLevel: "silent" });
    try {
      const out = await psql(
        proxy,
        "postgres",
        "",
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        "sslmode=disable",
      );
      expect(out).toEqual({ ok: true, out: "t" });
    } finally {
      await proxy.close({ timeoutMs: 200 });
    }
  });
});

describe("cancel requests", () => {
  async function client(): Promise<pg.Client> {
    const c = new pg.Client({
      host: "127.0.0.1",
      port: scramProxy.port,
      user: "alice",
      password: ALICE_PASSWORD,
      database: "postgres",
      ssl: { ca: readFileSync(certs.ca), servername: "localhost" },
    });
    await c.connect();
    return c;
  }

  function keyOf(c: pg.Client): { processId: number; secretKey: number } {
    const k = c as unknown as { processID: number; secretKey: number };
    return { processId: k.processID, secretKey: k.secretKey };
  }

  async function sendCancel(processId: number, secretKey: number): Promise<void> {
    const socket = await rawConnect(scramProxy.port);
    const closed = readUntilClosed(socket);
    const secret = Buffer.alloc(4);
    secret.writeInt32BE(secretKey | 0, 0);
    socket.write(encodeCancelRequest({ processId, secretKey: secret }));
    expect((await closed).length).toBe(0);
  }

  it("cancels the running statement with the proxy's key and retires that backend connection", async () => {
    const c = await client();
    const before = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    const sleeping = c.query("SELECT pg_sleep(30)").then(
      () => null,
      (error: { code?: string }) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { processId, secretKey } = keyOf(c);
    await sendCancel(processId, secretKey);
    expect((await sleeping)?.code).toBe("57014");
    const after = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    expect(after).not.toBe(before);
    await c.end();
  });

  it("ignores a cancel with a forged secret or an unknown process id", async () => {
    const c = await client();
    const { processId, secretKey } = keyOf(c);
    const sleeping = c.query("SELECT pg_sleep(0.8) AS slept").then(
      (result) => result.rows.length,
      (error: { code?: string }) => error.code,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sendCancel(processId, secretKey ^ 1);
    await sendCancel(processId ^ 0x1234, secretKey);
    expect(await sleeping).toBe(1);
    await c.end();
  });
});

/** SCRAM login over a TLS socket opened directly (no SSLRequest), then one query; its first column's values. */
async function directTlsQuery(
  port: number,
  alpn: string[],
  user: string,
  password: string,
  sql: string,
): Promise<string[]> {
  const socket = tlsConnect({
    host: "127.0.0.1",
    port,
    ca: readFileSync(certs.ca),
    servername: "localhost",
    ALPNProtocols: alpn,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", resolve);
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("closed during the handshake")));
  });
  const framer = new BackendFramer();
  const values: string[] = [];
  const scram = new ScramClient({ password });
  return new Promise((resolve, reject) => {
    socket.on("error", reject);
    socket.on("close", () => reject(new Error("closed")));
    socket.on("data", (chunk: Buffer) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        const message = decodeBackendMessage(frame);
        if (isProtocolFault(message)) return reject(new Error(message.message));
        switch (message.type) {
          case "AuthenticationSASL":
            socket.write(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
            break;
          case "AuthenticationSASLContinue": {
            const final = scram.serverFirst(message.data);
            if (!Buffer.isBuffer(final)) return reject(new Error(final.message));
            socket.write(encodeSASLResponse({ data: final }));
            break;
          }
          case "ErrorResponse":
            return reject(new Error(JSON.stringify(message.fields)));
          case "DataRow":
            values.push(message.values[0]?.toString("utf8") ?? "");
            break;
          case "ReadyForQuery":
            if (sent) {
              socket.destroy();
              return resolve(values);
            }
            sent = true;
            socket.write(encodeQuery({ sql }));
            break;
          default:
            break;
        }
      }
    });
    let sent = false;
    socket.write(
      encodeStartupMessage({ protocolVersion: 196608, parameters: { user, database: "postgres" } }),
    );
  });
}

/** Starts a SCRAM exchange over TLS and returns the server-first message, then hangs up. */
async function scramFirst(port: number, user: string): Promise<string> {
  const socket = tlsConnect({
    host: "127.0.0.1",
    port,
    ca: readFileSync(certs.ca),
    servername: "localhost",
    ALPNProtocols: ["postgresql"],
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", resolve);
    socket.once("error", reject);
  });
  const framer = new BackendFramer();
  const scram = new ScramClient({ password: "irrelevant" });
  return new Promise((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      framer.push(chunk);
      for (let frame = framer.next(); frame !== null; frame = framer.next()) {
        if (isProtocolFault(frame)) return reject(new Error(frame.message));
        const message = decodeBackendMessage(frame);
        if (isProtocolFault(message)) return reject(new Error(message.message));
        if (message.type === "AuthenticationSASL")
          socket.write(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
        else if (message.type === "AuthenticationSASLContinue") {
          resolve(message.data.toString("utf8"));
          socket.destroy();
        } else return reject(new Error(`unexpected ${message.type}`));
      }
    });
    socket.write(
      encodeStartupMessage({ protocolVersion: 196608, parameters: { user, database: "postgres" } }),
    );
  });
}
