import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { makeTestCertificates } from "../index.js";

describe("makeTestCertificates", () => {
  it("signs each server certificate with its CA for exactly the names it was given", () => {
    using certs = makeTestCertificates({
      servers: { backend: ["localhost"], proxy: ["localhost", "127.0.0.1"] },
    });
    const ca = new X509Certificate(readFileSync(certs.ca));
    const backend = new X509Certificate(readFileSync(certs.servers.backend.cert));
    const proxy = new X509Certificate(readFileSync(certs.servers.proxy.cert));
    expect(backend.verify(ca.publicKey)).toBe(true);
    expect(proxy.verify(ca.publicKey)).toBe(true);
    expect(backend.checkHost("localhost")).toBe("localhost");
    expect(backend.checkIP("127.0.0.1")).toBeUndefined();
    expect(proxy.checkIP("127.0.0.1")).toBe("127.0.0.1");
  });

  it("leaves server keys readable by their owner only and removes the folder on dispose", () => {
    const certs = makeTestCertificates();
    expect(statSync(certs.servers.server.key).mode & 0o077).toBe(0);
    certs[Symbol.dispose]();
    expect(existsSync(certs.dir)).toBe(false);
  });

  it("makes an unrelated CA on each call, which does not verify the other's certificates", () => {
    using certs = makeTestCertificates();
    using other = makeTestCertificates({ servers: {} });
    const server = new X509Certificate(readFileSync(certs.servers.server.cert));
    expect(server.verify(new X509Certificate(readFileSync(other.ca)).publicKey)).toBe(false);
  });
});
