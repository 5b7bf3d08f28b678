import type { Lease } from "@geo/pool";
import { describe, expect, it } from "vitest";
import { leaseWithin } from "./lease-within.js";

function fakeLease(): Lease & { discarded: string[] } {
  const discarded: string[] = [];
  return { discarded, discard: (reason: string) => discarded.push(reason) } as unknown as Lease & {
    discarded: string[];
  };
}

const timedOut = () => new Error("timed out");

describe("leaseWithin", () => {
  it("hands over a lease checked out in time", async () => {
    const lease = fakeLease();
    await expect(leaseWithin(async () => lease, 1000, timedOut)).resolves.toBe(lease);
    expect(lease.discarded).toEqual([]);
  });

  it("fails at the deadline and discards a lease that comes later", async () => {
    const lease = fakeLease();
    let hand: (lease: Lease) => void = () => {};
    const pending = leaseWithin(() => new Promise<Lease>((resolve) => (hand = resolve)), 20, timedOut);
    await expect(pending).rejects.toThrow("timed out");
    hand(lease);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lease.discarded).toHaveLength(1);
  });

  it("passes a checkout's own failure through", async () => {
    const failure = new Error("refused");
    await expect(leaseWithin(() => Promise.reject(failure), 1000, timedOut)).rejects.toBe(failure);
  });
});
