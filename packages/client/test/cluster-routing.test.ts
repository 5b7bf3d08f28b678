import { afterEach, describe, expect, it, vi } from "vitest";
import { ClientError, Cluster, describeReplicaEvent } from "../src/index.js";
import { FakeEndpoints, hostOf, primaryUrl, replicaUrl } from "./fake-endpoints.js";

const open: Cluster[] = [];
async function connect(fake: FakeEndpoints, overrides: Parameters<FakeEndpoints["connect"]>[0] = {}) {
  const cluster = await fake.connect(overrides);
  open.push(cluster);
  return cluster;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((cluster) => cluster.close()));
});

describe("routing table", () => {
  const configurations = [
    { label: "a distinct replica", replica: replicaUrl, split: true },
    { label: "no replica", replica: undefined, split: false },
    { label: "an empty replica", replica: "", split: false },
    { label: "the primary's own URL", replica: primaryUrl, split: false },
    {
      label: "the primary's URL spelled differently",
      replica: "postgresql://app:secret@PRIMARY.test/orders",
      split: false,
    },
  ] as const;
  const healths = ["healthy", "down at start-up", "reported failing"] as const;

  for (const configuration of configurations) {
    for (const health of healths) {
      const usesReplica = configuration.split && health === "healthy";
      it(`${configuration.label}, ${health}: read() uses the ${usesReplica ? "replica" : "primary"}; write() and primary() the primary`, async () => {
        const fake = new FakeEndpoints();
        if (health === "down at start-up") fake.down.add("replica.test");
        const cluster = await connect(fake, { replica: configuration.replica });
        const reported = health === "reported failing" && cluster.reportReplicaError(new Error("reset"));
        expect(reported).toBe(health === "reported failing" && configuration.split);
        expect(cluster.split).toBe(configuration.split);
        expect(cluster.replicaHealth().state).toBe(
          !configuration.split ? "absent" : health === "healthy" ? "healthy" : "tripped",
        );
        expect(hostOf(cluster.read())).toBe(usesReplica ? "replica.test" : "primary.test");
        expect(cluster.read() === cluster.write()).toBe(!usesReplica);
        expect(hostOf(cluster.write())).toBe("primary.test");
        expect(cluster.primary()).toBe(cluster.write());
        expect(fake.probesOf("replica.test")).toBe(configuration.split ? 1 : 0);
      });
    }
  }

  it("a reported replica error sends reads to the primary at once", async () => {
    const fake = new FakeEndpoints();
    const cluster = await connect(fake);
    const replica = cluster.read();
    expect(cluster.reportReplicaError(new Error("connection reset"), replica)).toBe(true);
    expect(cluster.read()).toBe(cluster.write());
    expect(cluster.replicaHealth()).toMatchObject({ state: "tripped", windowMs: 100, retryAt: 100 });
    expect(fake.events).toEqual([
      { kind: "tripped", reason: "reported", error: new Error("connection reset"), retryInMs: 100 },
    ]);
  });

  it("an error reported from the primary pool trips nothing", async () => {
    const cluster = await connect(new FakeEndpoints());
    expect(cluster.reportReplicaError(new Error("boom"), cluster.write())).toBe(false);
    expect(cluster.replicaHealth().state).toBe("healthy");
  });

  it("a second report while tripped neither re-trips nor extends the window", async () => {
    const fake = new FakeEndpoints();
    const cluster = await connect(fake);
    cluster.reportReplicaError(new Error("first"));
    fake.time = 50;
    expect(cluster.reportReplicaError(new Error("second"))).toBe(false);
    expect(cluster.replicaHealth()).toMatchObject({ retryAt: 100, lastError: new Error("first") });
  });
});

describe("start-up", () => {
  it("a replica that does not answer degrades start-up instead of failing it", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("replica.test");
    const cluster = await connect(fake);
    expect(cluster.read()).toBe(cluster.write());
    expect(fake.events).toMatchObject([{ kind: "tripped", reason: "startup", retryInMs: 100 }]);
    expect(cluster.replicaHealth().probes).toBe(0);
  });

  it("pings both endpoints once at start-up with the start-up timeout, and probes with the probe timeout", async () => {
    const fake = new FakeEndpoints();
    const timeouts: string[] = [];
    const cluster = await connect(fake, {
      startupTimeoutMs: 4_000,
      probeTimeoutMs: 300,
      probe: (sql, timeoutMs) => {
        timeouts.push(`${hostOf(sql)} ${timeoutMs}`);
        return fake.probe(sql, timeoutMs);
      },
    });
    expect(timeouts.sort()).toEqual(["primary.test 4000", "replica.test 4000"]);
    cluster.reportReplicaError(new Error("reset"));
    fake.time = 100;
    cluster.read();
    await cluster.settled();
    expect(timeouts.at(-1)).toBe("replica.test 300");
  });

  it("a primary that does not answer fails start-up with primary_unreachable", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("primary.test");
    const failure = await fake.connect().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClientError);
    expect(failure).toMatchObject({ code: "primary_unreachable", sqlState: "08001" });
    expect((failure as ClientError).cause).toEqual(new Error("primary.test refused the connection"));
  });

  it("the default event handler writes one warning line", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const fake = new FakeEndpoints();
      fake.down.add("replica.test");
      const { onReplicaEvent: _ignored, ...options } = fake.options();
      const cluster = await Cluster.connect(options);
      open.push(cluster);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain("replica unavailable (startup)");
    } finally {
      warn.mockRestore();
    }
  });

  it("an event handler that throws does not change routing", async () => {
    const fake = new FakeEndpoints();
    const cluster = await connect(fake, {
      onReplicaEvent: () => {
        throw new Error("logger broke");
      },
    });
    expect(cluster.reportReplicaError(new Error("reset"))).toBe(true);
    expect(cluster.read()).toBe(cluster.write());
  });

  const badOptions = [
    { name: "replicaRetryMinMs", overrides: { replicaRetryMinMs: 0 } },
    { name: "replicaRetryMaxMs", overrides: { replicaRetryMaxMs: Number.NaN } },
    { name: "replicaRetryMaxMs", overrides: { replicaRetryMinMs: 500, replicaRetryMaxMs: 100 } },
    { name: "probeTimeoutMs", overrides: { probeTimeoutMs: -1 } },
    { name: "startupTimeoutMs", overrides: { startupTimeoutMs: Number.POSITIVE_INFINITY } },
  ] as const;
  for (const { name, overrides } of badOptions) {
    it(`rejects ${JSON.stringify(overrides)} naming ${name} before pinging anything`, async () => {
      const fake = new FakeEndpoints();
      const failure = await fake.connect(overrides).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "invalid_option" });
      expect((failure as Error).message).toContain(name);
      expect(fake.probed).toEqual([]);
    });
  }

  it("rejects an unusable replica URL before opening or pinging the primary", async () => {
    const fake = new FakeEndpoints();
    const failure = await fake
      .connect({ replica: "mysql://app@replica.test/orders" })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "invalid_url", variables: ["option replica"] });
    expect(fake.probed).toEqual([]);
  });

  it("rejects an unusable primary URL without echoing it", async () => {
    const fake = new FakeEndpoints();
    const failure = await fake.connect({ primary: "postgres://app:hunter2@" }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "invalid_url", variables: ["option primary"] });
    expect((failure as Error).message).not.toContain("hunter2");
  });
});

describe("backoff and recovery under a fake clock", () => {
  it("never probes a healthy replica, however many reads and however much time passes", async () => {
    const fake = new FakeEndpoints();
    const cluster = await connect(fake);
    for (let read = 0; read < 1000; read++) {
      fake.time += 1000;
      expect(hostOf(cluster.read())).toBe("replica.test");
    }
    await cluster.settled();
    expect(fake.probesOf("replica.test")).toBe(1);
    expect(cluster.replicaHealth().probes).toBe(0);
  });

  it("probes only once the window is over, and only on a read", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("replica.test");
    const cluster = await connect(fake);
    fake.time = 99;
    expect(cluster.read()).toBe(cluster.write());
    await cluster.settled();
    expect(cluster.replicaHealth().probes).toBe(0);

    fake.time = 10_000;
    await cluster.settled();
    expect(cluster.replicaHealth().probes).toBe(0);

    expect(cluster.read()).toBe(cluster.write());
    await cluster.settled();
    expect(cluster.replicaHealth().probes).toBe(1);
  });

  it("doubles the window on each failed probe and clamps it to the maximum", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("replica.test");
    const cluster = await connect(fake);
    const windows: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const { retryAt } = cluster.replicaHealth();
      fake.time = (retryAt ?? 0) - 1;
      cluster.read();
      const before = cluster.replicaHealth().probes;
      fake.time = retryAt ?? 0;
      cluster.read();
      await cluster.settled();
      expect(cluster.replicaHealth().probes).toBe(before + 1);
      windows.push(cluster.replicaHealth().windowMs ?? 0);
    }
    expect(windows).toEqual([200, 400, 800, 800, 800]);
    expect(fake.events.map((event) => (event.kind === "restored" ? 0 : event.retryInMs))).toEqual([
      100, 200, 400, 800, 800, 800,
    ]);
  });

  it("a good probe restores the replica for the reads after it, and the next trip starts from the minimum", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("replica.test");
    const cluster = await connect(fake);
    fake.time = 100;
    cluster.read();
    await cluster.settled();
    expect(cluster.replicaHealth().windowMs).toBe(200);

    fake.down.delete("replica.test");
    fake.time = 300;
    expect(cluster.read()).toBe(cluster.write());
    await cluster.settled();
    expect(hostOf(cluster.read())).toBe("replica.test");
    expect(cluster.replicaHealth()).toEqual({
      state: "healthy",
      windowMs: undefined,
      retryAt: undefined,
      lastError: undefined,
      probes: 2,
    });
    expect(fake.events.at(-1)).toEqual({ kind: "restored", downForMs: 300 });

    fake.time = 1000;
    cluster.reportReplicaError(new Error("reset again"));
    expect(cluster.replicaHealth()).toMatchObject({ windowMs: 100, retryAt: 1100 });
  });

  it("runs one probe at a time; reads during it use the primary", async () => {
    const fake = new FakeEndpoints();
    const cluster = await connect(fake);
    cluster.reportReplicaError(new Error("reset"));
    let release: () => void = () => {};
    fake.gate = new Promise((resolve) => {
      release = resolve;
    });
    fake.time = 100;
    for (let read = 0; read < 10; read++) expect(cluster.read()).toBe(cluster.write());
    expect(cluster.replicaHealth()).toMatchObject({ state: "probing", probes: 1 });
    release();
    await cluster.settled();
    expect(hostOf(cluster.read())).toBe("replica.test");
    expect(fake.probesOf("replica.test")).toBe(2);
  });

  it("a probe function that throws synchronously counts as a failed probe", async () => {
    const fake = new FakeEndpoints();
    let calls = 0;
    const cluster = await connect(fake, {
      probe: (sql) => {
        calls++;
        if (calls > 2 && hostOf(sql) === "replica.test") throw new Error("probe threw");
        return Promise.resolve();
      },
    });
    cluster.reportReplicaError(new Error("reset"));
    fake.time = 100;
    cluster.read();
    await cluster.settled();
    expect(cluster.replicaHealth()).toMatchObject({
      state: "tripped",
      windowMs: 200,
      lastError: new Error("probe threw"),
    });
  });

  it("close waits for a running probe and is idempotent", async () => {
    const fake = new FakeEndpoints();
    const cluster = await fake.connect();
    cluster.reportReplicaError(new Error("reset"));
    let release: () => void = () => {};
    fake.gate = new Promise((resolve) => {
      release = resolve;
    });
    fake.time = 100;
    cluster.read();
    let closed = false;
    const closing = cluster.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(closed).toBe(true);
    expect(cluster.close()).toBe(cluster.close());
  });

  it("reads after close are served by the primary and start no probe", async () => {
    const fake = new FakeEndpoints();
    fake.down.add("replica.test");
    const cluster = await fake.connect();
    await cluster[Symbol.asyncDispose]();
    fake.time = 100;
    expect(cluster.read()).toBe(cluster.write());
    await cluster.settled();
    expect(fake.probesOf("replica.test")).toBe(1);
  });
});

describe("describeReplicaEvent", () => {
  it("says what happened and when the next probe is due", () => {
    expect(
      describeReplicaEvent({
        kind: "tripped",
        reason: "reported",
        error: new Error("reset"),
        retryInMs: 100,
      }),
    ).toBe("geo/client: replica unavailable (reported): reset; reads use the primary, next probe in 100 ms");
    expect(describeReplicaEvent({ kind: "probe_failed", error: "refused", retryInMs: 200 })).toBe(
      "geo/client: replica probe failed: refused; next probe in 200 ms",
    );
    expect(describeReplicaEvent({ kind: "restored", downForMs: 300 })).toBe(
      "geo/client: replica restored after 300 ms; reads use it again",
    );
  });
});
