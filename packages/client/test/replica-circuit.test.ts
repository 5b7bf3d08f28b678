import { describe, expect, it } from "vitest";
import { ReplicaCircuit } from "../src/replica-circuit.js";

describe("ReplicaCircuit", () => {
  it("an absent replica routes every read to the primary and cannot trip", () => {
    const circuit = new ReplicaCircuit(false, { retryMinMs: 10, retryMaxMs: 40 }, () => 0);
    expect(circuit.route()).toBe("primary");
    expect(circuit.trip(new Error("x"))).toBeUndefined();
    expect(circuit.health().state).toBe("absent");
  });

  it("ignores probe outcomes that arrive when no probe is running", () => {
    const circuit = new ReplicaCircuit(true, { retryMinMs: 10, retryMaxMs: 40 }, () => 0);
    expect(circuit.probeSucceeded()).toBe(0);
    expect(circuit.probeFailed(new Error("late"))).toBe(0);
    expect(circuit.health().state).toBe("healthy");
  });

  it("hands out exactly one probe per expired window", () => {
    let now = 0;
    const circuit = new ReplicaCircuit(true, { retryMinMs: 10, retryMaxMs: 40 }, () => now);
    circuit.trip(new Error("reset"));
    now = 10;
    expect([circuit.route(), circuit.route(), circuit.route()]).toEqual(["probe", "primary", "primary"]);
    expect(circuit.health()).toMatchObject({ state: "probing", windowMs: 10, retryAt: undefined, probes: 1 });
  });

  it("a window already at the maximum does not grow past it", () => {
    let now = 0;
    const circuit = new ReplicaCircuit(true, { retryMinMs: 30, retryMaxMs: 30 }, () => now);
    circuit.trip(new Error("reset"));
    now = 30;
    circuit.route();
    expect(circuit.probeFailed(new Error("still down"))).toBe(30);
  });
});
