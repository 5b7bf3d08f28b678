import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRoot, postgresAccount } from "../cluster/run-program.js";

/** Paths of one server certificate, signed by the set's CA, and its private key. */
export interface TestServerCertificate {
  readonly cert: string;
  readonly key: string;
}

/** A throwaway CA and server certificates in a temp folder; `remove()` (or `using`) deletes them. */
export interface TestCertificates<Name extends string> {
  readonly dir: string;
  /** The CA certificate (PEM path): what a client trusts to verify the servers. */
  readonly ca: string;
  readonly servers: Readonly<Record<Name, TestServerCertificate>>;
  remove(): void;
  [Symbol.dispose](): void;
}

export interface TestCertificatesOptions<Name extends string> {
  /**
   * One certificate per entry, naming the host names and IP addresses it is valid for (the first
   * is also its common name). Verify-full checks the host a client dialled against these, so leave
   * out `127.0.0.1` to make a certificate that only `localhost` matches.
   * `{ server: ["localhost", "127.0.0.1"] }` when omitted.
   */
  readonly servers?: Readonly<Record<Name, readonly string[]>>;
}

const defaultServers = { server: ["localhost", "127.0.0.1"] } as const;

function subjectAltName(names: readonly string[]): string {
  return names.map((name) => (isIP(name) === 0 ? `DNS:${name}` : `IP:${name}`)).join(",");
}

/**
 * Makes a throwaway CA and server certificates (P-256 keys, valid two days) with the openssl CLI.
 * When we run as root the server files go to the `postgres` account with mode 0600, because
 * PostgreSQL runs as that account and refuses a key file others can read. Call it again with
 * `{ servers: {} }` for an unrelated CA, which a client must refuse.
 *
 * @example
 * using certs = makeTestCertificates({ servers: { backend: ["localhost"] } });
 * await using cluster = await startCluster({
 *   settings: { ssl: "on", ssl_cert_file: certs.servers.backend.cert, ssl_key_file: certs.servers.backend.key },
 * });
 * @throws Error naming the missing package when the openssl command is not installed.
 */
export function makeTestCertificates<Name extends string = keyof typeof defaultServers>(
  options: TestCertificatesOptions<Name> = {},
): TestCertificates<Name> {
  const requested = (options.servers ?? defaultServers) as Readonly<Record<Name, readonly string[]>>;
  const dir = mkdtempSync(join(tmpdir(), "geo-tls-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
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

    const servers = {} as Record<Name, TestServerCertificate>;
    for (const [name, hosts] of Object.entries(requested) as [Name, readonly string[]][]) {
      openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${hosts[0]}`);
      writeFileSync(join(dir, `${name}.cnf`), `subjectAltName=${subjectAltName(hosts)}\n`);
      openssl(
        ...["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"],
        ...["-out", `${name}.crt`, "-days", "2", "-extfile", `${name}.cnf`],
      );
      servers[name] = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    }
    if (isRoot()) handToPostgres(dir, Object.values<TestServerCertificate>(servers));
    return { dir, ca: join(dir, "ca.crt"), servers, remove, [Symbol.dispose]: remove };
  } catch (error) {
    remove();
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error("the TLS tests need the openssl command (apt-get install -y openssl)", {
        cause: error,
      });
    throw error;
  }
}

function handToPostgres(dir: string, servers: readonly TestServerCertificate[]): void {
  const { uid, gid } = postgresAccount();
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o755);
  for (const file of servers.flatMap((server) => [server.cert, server.key])) {
    chownSync(file, uid, gid);
    chmodSync(file, 0o600);
  }
}
