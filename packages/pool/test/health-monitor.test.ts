import { describe, expect, it } from "vitest";
import {
  type BackendEndpoint,
  formatLsn,
  type HealthClock,
  type HealthEvent,
  HealthMonitor,
  type HealthMonitorOptions,
  type HealthProber,
  type ProbeReading,
  parseLsn,
  ReplicaRefusal,
} from "../src/index.js";

type Answer = ProbeReading | Error | "hang" | (() => Promise<ProbeReading>);

/** Answers each backend from a per-address setting; counts probes. */
class FakeProber implements HealthProber {
  readonly answers = new Map<string, Answer>();
  readonly probes: string[] = [];
  closed = false;

  set(address: string, answer: Answer): void {
    this.answers.set(address, answer);
  }

  probe(endpoint: BackendEndpoint): Promise<ProbeReading> {
    const address = `${endpoint.host}:${endpoint.port}`;
    this.probes.push(address);
    const answer = this.answers.get(address) ?? new Error("connection refused");
    if (answer === "hang") return new Promise(() => {});
    if (typeof answer === "function") return answer();
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Time moves only when the test says so. */
class FakeClock implements HealthClock {
  time = 1_000_000;
  private timers: { at: number; callback: () => void; id: number }[] = [];
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.time + ms, callback, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Advances time, firing due timers in order and letting promise callbacks run between them. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = until;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const P = "10.0.0.1:5432";
const R1 = "10.0.0.2:5432";
const R2 = "10.0.0.3:5432";
const US = "10.1.0.1:5432";

function endpoint(region: string, role: "primary" | "replica", address: string): BackendEndpoint {
  const [host, port] = address.split(":");
  return { region, role, host: host!, port: Number(port), database: "app", user: "geo" };
}

const topology = [
  endpoint("eu", "primary", P),
  endpoint("eu", "replica", R1),
  endpoint("eu", "replica", R2),
  endpoint("us", "primary", US),
];

const primaryAt = (lsn: bigint): ProbeReading => ({ inRecovery: false, lsn });
const replicaAt = (lsn: bigint): ProbeReading => ({ inRecovery: true, lsn });

function setup(options: Partial<HealthMonitorOptions> = {}) {
  const prober = new FakeProber();
  const clock = new FakeClock();
  const events: HealthEvent[] = [];
  const monitor = new HealthMonitor({ endpoints: topology, prober, clock, intervalMs: 1000, ...options });
  monitor.subscribe((event) => events.push(event));
  prober.set(P, primaryAt(1000n));
  prober.set(R1, replicaAt(1000n));
  prober.set(R2, replicaAt(1000n));
  prober.set(US, primaryAt(5n));
  return { prober, clock, monitor, events };
}

describe("LSN text", () => {
  it("parses both halves of a pg_lsn and formats it back as PostgreSQL spells it", () => {
    expect(parseLsn("0/3000060")).toBe(0x3000060n);
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn("16/B374D848"))).toBe("16/B374D848");
    expect(formatLsn(0n)).toBe("0/0");
  });

  it("rejects text that is not a WAL position with 22P02", () => {
    expect(() => parseLsn("16-B374")).toThrow(expect.objectContaining({ code: "22P02" }));
    expect(() => parseLsn("123456789/0")).toThrow(expect.objectContaining({ code: "22P02" }));
  });
});

describe("HealthMonitor", () => {
  it("refuses a topology with a backend listed twice, two primaries, or replicas without a primary", () => {
    const prober = new FakeProber();
    expect(
      () =>
        new HealthMonitor({
          prober,
          endpoints: [endpoint("eu", "primary", P), endpoint("us", "primary", P)],
        }),
    ).toThrow(expect.objectContaining({ code: "42710" }));
    expect(
      () =>
        new HealthMonitor({
          prober,
          endpoints: [endpoint("eu", "primary", P), endpoint("eu", "primary", R1)],
        }),
    ).toThrow(expect.objectContaining({ code: "42710" }));
    expect(() => new HealthMonitor({ prober, endpoints: [endpoint("eu", "replica", R1)] })).toThrow(
      expect.objectContaining({ code: "42704" }),
    );
  });

  it("reports every backend unknown before the first probe and up after a successful one", async () => {
    const { monitor } = setup();
    expect(monitor.list().map((backend) => backend.state)).toEqual([
      "unknown",
      "unknown",
      "unknown",
      "unknown",
    ]);
    await monitor.probeNow();
    const primary = monitor.status(P)!;
    expect(primary).toMatchObject({
      state: "up",
      up: true,
      inRecovery: false,
      lsn: 1000n,
      roleMismatch: false,
    });
    expect(primary.lastProbeAt).toBe(1_000_000);
    expect(monitor.status({ host: "10.0.0.2", port: 5432 })).toMatchObject({
      role: "replica",
      inRecovery: true,
    });
    expect(monitor.status("10.9.9.9:1")).toBeUndefined();
    expect(monitor.primaryOf("eu")).toMatchObject({ address: P, role: "primary", state: "up" });
    expect(monitor.primaryOf("nowhere")).toBeUndefined();
  });

  it("marks a backend down only at the third consecutive failed probe", async () => {
    const { monitor, prober, events } = setup();
    await monitor.probeNow();
    prober.set(R1, new Error("connection refused"));
    await monitor.probeNow();
    await monitor.probeNow();
    expect(monitor.status(R1)).toMatchObject({
      state: "up",
      consecutiveFailures: 2,
      lastError: "connection refused",
    });
    await monitor.probeNow();
    expect(monitor.status(R1)).toMatchObject({ state: "down", consecutiveFailures: 3 });
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "state",
        previous: "up",
        cause: "probe-failures",
        backend: expect.objectContaining({ address: R1 }),
      }),
    );
  });

  it("starts counting again after a success in between failures", async () => {
    const { monitor, prober } = setup();
    prober.set(R1, new Error("refused"));
    await monitor.probeNow();
    await monitor.probeNow();
    prober.set(R1, replicaAt(1000n));
    await monitor.probeNow();
    prober.set(R1, new Error("refused"));
    await monitor.probeNow();
    await monitor.probeNow();
    expect(monitor.status(R1)).toMatchObject({ state: "up", consecutiveFailures: 2 });
  });

  it("marks a backend down at once on reportFailure and brings it up at the next successful probe", async () => {
    const { monitor, events } = setup();
    await monitor.probeNow();
    monitor.reportFailure(R1, new Error("ECONNREFUSED"));
    expect(monitor.status(R1)).toMatchObject({ state: "down", lastError: "ECONNREFUSED" });
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })?.address).toBe(R2);
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })?.address).toBe(R2);
    expect(monitor.alerts().map((alert) => [alert.kind, alert.address])).toEqual([["backend-down", R1]]);
    await monitor.probeNow();
    expect(monitor.status(R1)?.state).toBe("up");
    expect(monitor.alerts()).toEqual([]);
    expect(
      events
        .filter((event) => event.type === "state" && event.backend.address === R1)
        .map((event) => event.type === "state" && event.cause),
    ).toEqual(["probe", "reported-failure", "probe"]);
    expect(() => monitor.reportFailure("10.9.9.9:1")).toThrow(expect.objectContaining({ code: "42704" }));
  });

  it("computes replica lag from its own primary's position, clamped at zero", async () => {
    const { monitor, prober } = setup();
    prober.set(P, primaryAt(5000n));
    prober.set(R1, replicaAt(1200n));
    prober.set(R2, replicaAt(6000n));
    await monitor.probeNow();
    expect(monitor.status(R1)?.lagBytes).toBe(3800n);
    expect(monitor.status(R2)?.lagBytes).toBe(0n);
    expect(monitor.status(P)?.lagBytes).toBeUndefined();
  });

  it("leaves lag unknown while the primary's position is unknown", async () => {
    const { monitor, prober } = setup();
    prober.set(P, new Error("refused"));
    await monitor.probeNow();
    expect(monitor.status(R1)?.lagBytes).toBeUndefined();
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 1n << 40n }).replicas).toEqual([
      { address: R1, refusal: ReplicaRefusal.primaryDown },
      { address: R2, refusal: ReplicaRefusal.primaryDown },
    ]);
  });

  it("forgets replica lag as soon as one primary probe fails, before the primary counts as down", async () => {
    const { monitor, prober } = setup();
    await monitor.probeNow();
    expect(monitor.status(R1)?.lagBytes).toBe(0n);
    prober.set(P, new Error("timeout"));
    await monitor.probeNow();
    expect(monitor.status(P)?.state).toBe("up");
    expect(monitor.status(R1)?.lagBytes).toBeUndefined();
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 1n << 40n }).replicas[0]?.refusal).toBe(
      ReplicaRefusal.lagUnknown,
    );
    prober.set(P, primaryAt(1000n));
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })).toBeDefined();
  });

  it("picks only healthy replicas within the lag bound, taking turns among them", async () => {
    const { monitor, prober } = setup();
    prober.set(P, primaryAt(10_000n));
    prober.set(R1, replicaAt(9_990n));
    prober.set(R2, replicaAt(9_000n));
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 100 })?.address).toBe(R1);
    expect(monitor.pickReplica("eu", { maxLagBytes: 100 })?.address).toBe(R1);
    expect(monitor.pickReplica("eu", { maxLagBytes: 5 })).toBeUndefined();
    const turns = [0, 1, 2, 3].map(() => monitor.pickReplica("eu", { maxLagBytes: 2000n })?.address);
    expect(new Set(turns)).toEqual(new Set([R1, R2]));
    expect(turns[0]).not.toBe(turns[1]);
    expect(monitor.pickReplica("us", { maxLagBytes: 1n << 40n })).toBeUndefined();
    expect(monitor.pickReplica("nowhere", { maxLagBytes: 0 })).toBeUndefined();
  });

  it("never picks a replica before any probe, nor one whose primary is down", async () => {
    const { monitor, prober } = setup();
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })).toBeUndefined();
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })).toBeDefined();
    monitor.reportFailure(P);
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })).toBeUndefined();
    prober.set(P, primaryAt(1000n));
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })).toBeDefined();
  });

  it("skips drained replicas until undrained, and refuses to drain a primary or an unknown address", async () => {
    const { monitor, events } = setup();
    await monitor.probeNow();
    expect(monitor.drain(R1)).toMatchObject({ address: R1, drained: true });
    expect(monitor.drain(R1).drained).toBe(true);
    for (let i = 0; i < 3; i++) expect(monitor.pickReplica("eu", { maxLagBytes: 0 })?.address).toBe(R2);
    monitor.drain(R2);
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })).toBeUndefined();
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 0 }).replicas.map((r) => r.refusal)).toEqual([
      "drained",
      "drained",
    ]);
    monitor.undrain(R1);
    expect(monitor.pickReplica("eu", { maxLagBytes: 0 })?.address).toBe(R1);
    expect(events.filter((event) => event.type === "drain")).toHaveLength(3);
    expect(() => monitor.drain(P)).toThrow(expect.objectContaining({ code: "55000" }));
    expect(() => monitor.undrain("10.9.9.9:1")).toThrow(expect.objectContaining({ code: "42704" }));
  });

  it("requires a replica to have replayed at least minLsn", async () => {
    const { monitor, prober } = setup();
    prober.set(R1, replicaAt(900n));
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 1000, minLsn: 1000n })?.address).toBe(R2);
    expect(monitor.pickReplica("eu", { maxLagBytes: 1000, minLsn: 1000n })?.address).toBe(R2);
    expect(monitor.pickReplica("eu", { maxLagBytes: 1000, minLsn: 1001n })).toBeUndefined();
  });

  it("keeps reads off replicas after a write until a probe that started after it, then until replayed past it", async () => {
    const { monitor, prober } = setup();
    await monitor.probeNow();
    // The write commits; the primary is now at 2000 but nobody has probed it since.
    prober.set(P, primaryAt(2000n));
    const fence = monitor.writeFence("eu");
    expect(fence.resolved).toBe(false);
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 1n << 40n, fence }).replicas[0]?.refusal).toBe(
      ReplicaRefusal.writeNotYetProbed,
    );
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n, fence })).toBeUndefined();
    // Without the fence the replicas still qualify on lag alone.
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })).toBeDefined();

    prober.set(R1, replicaAt(1500n));
    prober.set(R2, replicaAt(2100n));
    await monitor.probeNow();
    expect(fence.lsn).toBe(2000n);
    await expect(fence.settled).resolves.toBe(2000n);
    for (let i = 0; i < 3; i++)
      expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n, fence })?.address).toBe(R2);
    prober.set(R2, replicaAt(1999n));
    await monitor.probeNow();
    expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n, fence })).toBeUndefined();
    expect(() => monitor.pickReplica("eu", { maxLagBytes: 0, fence: monitor.writeFence("us") })).toThrow(
      RangeError,
    );
    expect(() => monitor.writeFence("nowhere")).toThrow(expect.objectContaining({ code: "42704" }));
  });

  it("resolves a write fence only at a primary probe that started after it, not one already in flight", async () => {
    const { monitor, prober, clock } = setup({ probeTimeoutMs: 500 });
    await monitor.probeNow();
    let answerPrimary: (reading: ProbeReading) => void = () => {};
    prober.set(
      P,
      () =>
        new Promise((resolve) => {
          answerPrimary = resolve;
        }),
    );
    const inFlight = monitor.probeNow();
    await flush();
    const fence = monitor.writeFence("eu");
    answerPrimary(primaryAt(1500n)); // read before the write committed
    await inFlight;
    expect(monitor.status(P)?.lsn).toBe(1500n);
    expect(fence.resolved).toBe(false);
    prober.set(P, primaryAt(2500n));
    await monitor.probeNow();
    expect(fence.lsn).toBe(2500n);
    expect(clock.pending).toBe(0);
  });

  it("explains each replica's refusal without taking a turn", async () => {
    const { monitor, prober } = setup();
    prober.set(P, primaryAt(10_000n));
    prober.set(R1, replicaAt(9_000n));
    prober.set(R2, replicaAt(10_000n));
    await monitor.probeNow();
    const explained = monitor.explainReplicaChoice("eu", { maxLagBytes: 10 });
    expect(explained.chosen?.address).toBe(R2);
    expect(explained.replicas).toEqual([
      { address: R1, refusal: ReplicaRefusal.tooFarBehind },
      { address: R2, refusal: undefined },
    ]);
    monitor.drain(R2);
    monitor.undrain(R2);
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 2000 }).chosen?.address).toBe(R1);
    expect(monitor.explainReplicaChoice("eu", { maxLagBytes: 2000 }).chosen?.address).toBe(R1);
    expect(monitor.pickReplica("eu", { maxLagBytes: 2000 })?.address).toBe(R1);
    expect(monitor.pickReplica("eu", { maxLagBytes: 2000 })?.address).toBe(R2);
    expect(() => monitor.explainReplicaChoice("nowhere", { maxLagBytes: 0 })).toThrow(
      expect.objectContaining({ code: "42704" }),
    );
  });

  it("settles pending write fences to undefined when stopped, and closes the prober", async () => {
    const { monitor, prober } = setup();
    const fence = monitor.writeFence("eu");
    await monitor.stop();
    await expect(fence.settled).resolves.toBeUndefined();
    expect(fence.resolved).toBe(false);
    expect(prober.closed).toBe(true);
  });

  it("waits for a fence that a failed primary probe could not resolve", async () => {
    const { monitor, prober } = setup();
    const fence = monitor.writeFence("eu");
    prober.set(P, new Error("refused"));
    await monitor.probeNow();
    expect(fence.resolved).toBe(false);
    prober.set(P, primaryAt(3000n));
    await monitor.probeNow();
    expect(fence.lsn).toBe(3000n);
  });

  it("flags a primary in recovery and a replica out of recovery, and never picks the latter", async () => {
    const { monitor, prober, events } = setup();
    prober.set(US, { inRecovery: true, lsn: 5n });
    prober.set(R1, primaryAt(1000n));
    await monitor.probeNow();
    expect(monitor.status(US)).toMatchObject({ roleMismatch: true, inRecovery: true, state: "up" });
    expect(monitor.status(R1)?.roleMismatch).toBe(true);
    expect(monitor.status(R1)?.lagBytes).toBeUndefined();
    const mismatches = monitor.alerts().filter((alert) => alert.kind === "role-mismatch");
    expect(mismatches.map((alert) => alert.address).sort()).toEqual([R1, US].sort());
    for (let i = 0; i < 3; i++)
      expect(monitor.pickReplica("eu", { maxLagBytes: 1n << 40n })?.address).toBe(R2);
    expect(events.filter((event) => event.type === "alert-raised")).toHaveLength(2);
  });

  it("raises a lag alert beyond maxReplicaLagBytes once, keeps its start time, and clears it on catch-up", async () => {
    const { monitor, prober, clock, events } = setup({ maxReplicaLagBytes: 100 });
    prober.set(P, primaryAt(5000n));
    prober.set(R1, replicaAt(4000n));
    prober.set(R2, replicaAt(5000n));
    await monitor.probeNow();
    const [alert] = monitor.alerts();
    expect(alert).toMatchObject({ kind: "replica-lagging", address: R1, lagBytes: 1000n, since: 1_000_000 });
    await clock.advance(10);
    prober.set(R1, replicaAt(4500n));
    await monitor.probeNow();
    expect(monitor.alerts()).toEqual([expect.objectContaining({ lagBytes: 500n, since: 1_000_000 })]);
    prober.set(R1, replicaAt(5000n));
    await monitor.probeNow();
    expect(monitor.alerts()).toEqual([]);
    expect(events.filter((event) => event.type === "alert-raised")).toHaveLength(1);
    expect(events.filter((event) => event.type === "alert-cleared")).toHaveLength(1);
  });

  it("counts a probe that outlives the probe timeout as failed, and one still running as failed again", async () => {
    const { monitor, prober, clock } = setup({ probeTimeoutMs: 300 });
    prober.set(R1, "hang");
    const round = monitor.probeNow();
    await clock.advance(300);
    await round;
    expect(monitor.status(R1)).toMatchObject({ consecutiveFailures: 1, state: "unknown" });
    expect(monitor.status(R1)?.lastError).toMatch(/did not answer within 300 ms/);
    const second = monitor.probeNow();
    await flush();
    await second;
    expect(monitor.status(R1)?.lastError).toMatch(/has not finished/);
    expect(prober.probes.filter((address) => address === R1)).toHaveLength(1);
  });

  it("probes at once on start, then every intervalMs, and stops probing when stopped", async () => {
    const { monitor, prober, clock, events } = setup({ intervalMs: 1000 });
    await monitor.start();
    expect(prober.probes).toHaveLength(4);
    await clock.advance(999);
    expect(prober.probes).toHaveLength(4);
    await clock.advance(1);
    expect(prober.probes).toHaveLength(8);
    await clock.advance(1000);
    expect(prober.probes).toHaveLength(12);
    expect(
      events.filter((event) => event.type === "round").map((event) => event.type === "round" && event.round),
    ).toEqual([1, 2, 3]);
    await monitor.stop();
    await clock.advance(5000);
    expect(prober.probes).toHaveLength(12);
    expect(clock.pending).toBe(0);
  });

  it("keeps going when a listener throws, and stops telling an unsubscribed listener", async () => {
    const { monitor, prober } = setup();
    monitor.subscribe(() => {
      throw new Error("listener bug");
    });
    const seen: HealthEvent[] = [];
    const unsubscribe = monitor.subscribe((event) => seen.push(event));
    await monitor.probeNow();
    expect(monitor.status(P)?.state).toBe("up");
    const count = seen.length;
    unsubscribe();
    prober.set(P, new Error("refused"));
    monitor.reportFailure(P);
    expect(seen).toHaveLength(count);
  });
});
