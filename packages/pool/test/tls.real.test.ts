import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { PgError } from "@geo/proto";
import {
  FakeBackend,
  makeTestCertificates,
  type PgCluster,
  startCluster,
  type TestCertificates,
} from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendConnection, type BackendSslMode, backendTlsUpgrade } from "../src/index.js";

/** The server certificate names `localhost` only (no IP address), so verify-full to 127.0.0.1 fails. */
let certs: TestCertificates<"server">;
/** An unrelated CA that signed nothing the server presents. */
let otherCertificates: TestCertificates<never>;
let cluster: PgCluster;
let port: number;
const open: BackendConnection[] = [];

beforeAll(async () => {
  certs = makeTestCertificates({ servers: { server: ["localhost"] } });
  otherCertificates = makeTestCertificates<never>({ servers: {} });
  cluster = await startCluster({
    settings: { ssl: "on", ssl_cert_file: certs.servers.server.cert, ssl_key_file: certs.servers.server.key },
  });
  port = cluster.servers[0]!.port;
});

afterAll(async () => {
  for (const connection of open) connection.destroy();
  await cluster?.stop();
  certs?.remove();
  otherCertificates?.remove();
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
    const error = await failure(connect("verify-ca", { ca: otherCertificates.ca }));
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
