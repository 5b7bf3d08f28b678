import { createServer, type Server } from "node:net";
import { parseConfig } from "@geo/core";
import { FakeBackend } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError, startProxy } from "../src/index.js";
import { REGIONS, regionsToml } from "./support/fake-regions.js";

let fakes: FakeBackend[];

beforeAll(async () => {
  fakes = await Promise.all(REGIONS.map(() => FakeBackend.start({})));
});
afterAll(async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
});

/** Starts a proxy with this [admin] section; resolves to the StartupError lines it refused with. */
async function refusal(adminToml: string): Promise<readonly string[]> {
  const config = parseConfig(
    regionsToml(
      fakes.map((fake) => fake.port),
      adminToml,
    ),
    "admin.toml",
  );
  const started = await startProxy({ config, logLevel: "silent", port: 0 }).then(
    async (proxy) => {
      await proxy.close({ timeoutMs: 100 });
      return undefined;
    },
    (error: unknown) => error,
  );
  expect(started).toBeInstanceOf(StartupError);
  return (started as StartupError).lines;
}

describe("an admin port that cannot start", () => {
  it("stops the proxy from starting beyond loopback without a password, naming the field", async () => {
    const lines = await refusal('\n[admin]\nhost = "0.0.0.0"\nport = 0\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^admin\.toml: \[admin\] password: .*0\.0\.0\.0.*beyond loopback.*without a password/,
    );
  });

  it("refuses an empty password, naming the field", () => {
    // The configuration reader refuses it first; the admin port would too (ADMIN_PASSWORD_EMPTY).
    const toml = regionsToml(
      fakes.map((fake) => fake.port),
      '\n[admin]\nport = 0\npassword = ""\n',
    );
    expect(() => parseConfig(toml, "admin.toml")).toThrow(/admin\.password/);
  });

  it("refuses tls = true without a [tls] certificate, naming what is missing", async () => {
    const lines = await refusal("\n[admin]\nport = 0\ntls = true\n");
    expect(lines).toEqual([
      expect.stringMatching(/^admin\.toml: \[admin\] tls: .*the cert is missing.*\[tls\] cert/),
    ]);
  });

  it("refuses a port already taken, naming host and port", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const lines = await refusal(`\n[admin]\nport = ${port}\n`);
      expect(lines).toEqual([
        expect.stringMatching(/^admin\.toml: \[admin\] host\/port: .*could not listen on 127\.0\.0\.1:\d+/),
      ]);
    } finally {
      taken.close();
    }
  });
});
