import { ProxyMetrics } from "@geo/admin";
import { FrontendCode } from "@geo/proto";
import { describe, expect, it } from "vitest";
import type { Route } from "../routing/router.js";
import type { Session } from "../session/session.js";
import { ObservedClient } from "./observed-client.js";

interface QueuedEntry {
  readonly effect?: () => void;
}

/** The parts of a session the observer reads, with a relay whose queue the test drains by hand. */
function fakeSession(): { session: Session; queue: QueuedEntry[] } {
  const queue: QueuedEntry[] = [];
  const relay = {
    pending: 0,
    local(entry: QueuedEntry) {
      queue.push(entry);
    },
  };
  return { session: { id: 1, relay } as unknown as Session, queue };
}

const inRegion = (region: string): Route => ({ kind: "region", region, readOnly: true, anywhere: false });

function observed(metrics: ProxyMetrics): Record<string, number> {
  return metrics.traffic().byPlan;
}

function newMetrics(): ProxyMetrics {
  return new ProxyMetrics({
    node: "t",
    homeRegion: "eu-west",
    regions: ["eu-west", "us-east"],
    processMetrics: false,
  });
}

describe("ObservedClient", () => {
  it("counts a statement's regions when routed and times it when its exchange ends", () => {
    const metrics = newMetrics();
    const { session } = fakeSession();
    const client = new ObservedClient(session, metrics, "eu-west");
    client.routed(inRegion("us-east"));
    expect(metrics.traffic().byRegion).toEqual({ "eu-west": 0, "us-east": 1 });
    expect(metrics.traffic().leftHome).toBe(1);
    expect(observed(metrics)["one_region"]).toBe(0);
    client.afterMessage(FrontendCode.Bind);
    expect(observed(metrics)["one_region"]).toBe(0);
    client.afterMessage(FrontendCode.Sync);
    expect(observed(metrics)["one_region"]).toBe(1);
    expect(client.statements).toBe(1);
  });

  it("times each pipelined exchange when its own ReadyForQuery has been written", () => {
    const metrics = newMetrics();
    const { session, queue } = fakeSession();
    (session.relay as unknown as { pending: number }).pending = 3;
    const client = new ObservedClient(session, metrics, "eu-west");
    client.routed(inRegion("eu-west"));
    client.afterMessage(FrontendCode.Sync);
    client.routed({ kind: "error", error: undefined as never });
    client.routed({ kind: "local", what: "console" });
    client.afterMessage(FrontendCode.Sync);
    expect(queue).toHaveLength(2);
    queue[0]!.effect!();
    expect(observed(metrics)).toMatchObject({ one_region: 1, refused: 0, console: 0 });
    queue[1]!.effect!();
    expect(observed(metrics)).toMatchObject({ one_region: 1, refused: 1, console: 1 });
  });

  it("keeps timing right for a client that never lets its exchanges drain", () => {
    const metrics = newMetrics();
    const { session, queue } = fakeSession();
    (session.relay as unknown as { pending: number }).pending = 1;
    const client = new ObservedClient(session, metrics, "eu-west");
    for (let i = 0; i < 2000; i++) {
      client.routed(inRegion("eu-west"));
      client.afterMessage(FrontendCode.Sync);
      // The previous exchange's answer is written while this one is already routed.
      if (i > 0) queue[i - 1]!.effect!();
    }
    expect(observed(metrics)["one_region"]).toBe(1999);
    queue[1999]!.effect!();
    expect(observed(metrics)["one_region"]).toBe(2000);
    expect(metrics.latency().find((summary) => summary.plan === "one_region")?.samples).toBe(512);
  });

  it("does not count an empty query as a statement", () => {
    const metrics = newMetrics();
    const client = new ObservedClient(fakeSession().session, metrics, "eu-west");
    client.routed({ kind: "local", what: "empty" });
    client.afterMessage(FrontendCode.Query);
    expect(metrics.traffic().statements).toBe(0);
    expect(client.statements).toBe(0);
  });
});
