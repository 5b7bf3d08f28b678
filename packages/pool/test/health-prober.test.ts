import { FakeBackend } from "@geo/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type BackendEndpoint, ConnectionProber, PROBE_SQL } from "../src/index.js";

const open: FakeBackend[] = [];

afterEach(async () => {
  for (const fake of open.splice(0)) await fake.close();
});

async function fakeAnswering(
  rows: (string | null)[][],
  extra: { stall?: boolean } = {},
): Promise<FakeBackend> {
  const fake = await FakeBackend.start({
    rules: [{ match: PROBE_SQL, reply: { columns: ["pg_is_in_recovery", "lsn"], rows, ...extra } }],
  });
  open.push(fake);
  return fake;
}

const endpointOf = (fake: FakeBackend): BackendEndpoint => ({
  region: "eu",
  role: "replica",
  host: "127.0.0.1",
  port: fake.port,
  database: "app",
  user: "geo",
});

describe("ConnectionProber", () => {
  it("reads recovery and WAL position over one connection named geoproxy health, reused between probes", async () => {
    const fake = await fakeAnswering([["t", "16/B374D848"]]);
    const prober = new ConnectionProber();
    try {
      const first = await prober.probe(endpointOf(fake), 2_000);
      expect(first).toEqual({ inRecovery: true, lsn: (0x16n << 32n) | 0xb374d848n });
      await prober.probe(endpointOf(fake), 2_000);
      expect(fake.connections).toHaveLength(1);
      expect(fake.connections[0]?.startupParameters["application_name"]).toBe("geoproxy health");
      expect(fake.statements.map((statement) => statement.sql)).toEqual([PROBE_SQL, PROBE_SQL]);
    } finally {
      await prober.close();
    }
  });

  it("reads a NULL position as unknown", async () => {
    const fake = await fakeAnswering([["f", null]]);
    const prober = new ConnectionProber({ applicationName: "probe-test" });
    try {
      expect(await prober.probe(endpointOf(fake), 2_000)).toEqual({ inRecovery: false, lsn: undefined });
      expect(fake.connections[0]?.startupParameters["application_name"]).toBe("probe-test");
    } finally {
      await prober.close();
    }
  });

  it("rejects an answer of the wrong shape with XX000 and reconnects for the next probe", async () => {
    const fake = await fakeAnswering([["maybe", "0/0"]]);
    const prober = new ConnectionProber();
    try {
      await expect(prober.probe(endpointOf(fake), 2_000)).rejects.toMatchObject({ code: "XX000" });
      await expect(prober.probe(endpointOf(fake), 2_000)).rejects.toMatchObject({ code: "XX000" });
      expect(fake.connections).toHaveLength(2);
    } finally {
      await prober.close();
    }
  });

  it("fails a probe the server never answers within the timeout with 57014", async () => {
    const fake = await fakeAnswering([], { stall: true });
    const prober = new ConnectionProber();
    try {
      await expect(prober.probe(endpointOf(fake), 200)).rejects.toMatchObject({ code: "57014" });
    } finally {
      await prober.close();
    }
  });

  it("fails a probe of a closed port with 08001", async () => {
    const fake = await fakeAnswering([]);
    const endpoint = endpointOf(fake);
    await fake.close();
    const prober = new ConnectionProber();
    await expect(prober.probe(endpoint, 2_000)).rejects.toMatchObject({ code: "08001" });
    await prober.close();
  });
});
