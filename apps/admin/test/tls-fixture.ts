import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway self-signed certificate for 127.0.0.1 and localhost, made by the openssl command. */
export function selfSignedCertificate(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "geo-admin-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "pipe" },
    );
  } catch (error) {
    throw new Error(`the TLS tests need the openssl command (apt-get install -y openssl): ${String(error)}`);
  }
  const cert = readFileSync(join(dir, "cert.pem"), "utf8");
  const key = readFileSync(join(dir, "key.pem"), "utf8");
  rmSync(dir, { recursive: true, force: true });
  return { cert, key };
}
