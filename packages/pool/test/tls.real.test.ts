import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgError } from "@geo/proto";
import { FakeBackend, type PgCluster, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendConnection, type BackendSslMode, backendTlsUpgrade } from "../src/index.js";

/** A throwaway CA and a server certificate for `localhost` only (no IP address in it). */
function makeCertificates(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
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
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "other.key",
    "-out",
    "other.crt",
    "-days",
    "2",
    "-subj",
    "/CN=other CA",
  );
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=DNS:localhost\n");
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.crt",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  );
  return {
    ca: join(dir, "ca.crt"),
    otherCa: join(dir, "other.crt"),
    cert: join(dir, "server.crt"),
    key: join(dir, "server.key"),
  };
}

/** PostgreSQL refuses a key file others can read, and runs as `postgres` when we are root. */
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
let certs: ReturnType<typeof makeCertificates>;
let cluster: PgCluster;
let port: number;
const open: BackendConnection[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "geo-pool-tls-"));
  certs = makeCertificates(dir);
  handToPostgres(dir, [certs.cert, certs.key]);
  cluster = await startCluster({
    settings: { ssl: "on", ssl_cert_file: certs.cert, ssl_key_file: certs.key },
  });
  port = cluster.servers[0]!.port;
});

afterAll(async () => {
  for (const connection of open) connection.destroy();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(
  sslmode: BackendSslMode,
  options: { host?: string; ca?: string | undefined; port?: number } = {},
): Promise<BackendConnection> {
  const host = options.host ?? "127.0.0.1";
  const connection = await BackendConnection.connect({
    host,
    port: options.port ?? port,
    database: "postgres",
    user: "postgres",
    connectTimeoutMs: 5_000,
    upgrade: backendTlsUpgrade({
      sslmode,
      host,
      ...(options.ca === undefined ? {} : { ca: readFileSync(options.ca) }),
    }),
  });
  open.push(connection);
  return connection;
}

async function usesTls(connection: BackendConnection): Promise<string | null | undefined> {
  const { rows } = await connection.simpleQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  return rows[0]?.[0];
}

async function failure(promise: Promise<unknown>): Promise<PgError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PgError);
  return error as PgError;
}

describe("TLS to backends with libpq's sslmode meanings", () => {
  it("disable speaks plain TCP even to a server that offers TLS", async () => {
    expect(backendTlsUpgrade({ sslmode: "disable", host: "127.0.0.1" })).toBeUndefined();
    expect(await usesTls(await connect("disable"))).toBe("f");
  });

  it("prefer and require encrypt without checking the certificate", async () => {
    expect(await usesTls(await connect("prefer"))).toBe("t");
    expect(await usesTls(await connect("require"))).toBe("t");
  });

  it("prefer continues in clear when the server answers N; require refuses with 08001", async () => {
    await using fake = await FakeBackend.start();
    const plain = await connect("prefer", { port: fake.port });
    expect(plain.usable).toBe(true);
    const refused = await failure(connect("require", { port: fake.port }));
    expect(refused.code).toBe("08001");
    expect(refused.message).toMatch(/does not support TLS/);
  });

  it("verify-ca accepts a certificate signed by the configured CA whatever host name it carries", async () => {
    expect(await usesTls(await connect("verify-ca", { host: "127.0.0.1", ca: certs.ca }))).toBe("t");
  });

  it("verify-ca refuses a certificate signed by another CA", async () => {
    const error = await failure(connect("verify-ca", { ca: certs.otherCa }));
    expect(error.code).toBe("08001");
    expect(error.hint).toMatch(/CA/);
  });

  it("verify-full accepts the right host name and refuses a wrong one", async () => {
    expect(await usesTls(await connect("verify-full", { host: "localhost", ca: certs.ca }))).toBe("t");
    const error = await failure(connect("verify-full", { host: "127.0.0.1", ca: certs.ca }));
    expect(error.code).toBe("08001");
    expect(error.message).toMatch(/127\.0\.0\.1/);
  });

  it("verify-full without a configured CA checks against the system roots, which do not hold a test CA", async () => {
    const error = await failure(connect("verify-full", { host: "localhost" }));
    expect(error.code).toBe("08001");
  });

  it("cancels a statement over TLS: the cancel connection negotiates TLS the same way", async () => {
    const connection = await connect("verify-full", { host: "localhost", ca: certs.ca });
    const sleeping = connection.simpleQuery("SELECT pg_sleep(30)", { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await connection.cancel();
    const error = await failure(sleeping);
    expect(error.code).toBe("57014");
  });

  it("refuses bytes that follow the S before the handshake (CVE-2021-23222)", async () => {
    const injector: Server = createServer((socket) => {
      socket.once("data", () => socket.write(Buffer.from("SZ")));
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => injector.listen(0, "127.0.0.1", resolve));
    const address = injector.address();
    const injectorPort = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const error = await failure(connect("require", { port: injectorPort }));
      expect(error.code).toBe("08P01");
      expect(error.message).toMatch(/before the handshake/);
    } finally {
      injector.close();
    }
  });
});
