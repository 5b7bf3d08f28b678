import type { Lease } from "@geo/pool";
import { describe, expect, it } from "vitest";
import { SessionSettings } from "../session/session-settings.js";
import { LegSet } from "./leg-set.js";
import { TransactionBlock } from "./transaction-block.js";

/**
 * A lease that records how it went back; its connection reports the transaction status given, and
 * whether its backend owes a ReadyForQuery (`isQuiescent` false: a statement still runs there).
 */
function fakeLease(txStatus: "I" | "T" | "E" = "I") {
  const returned: string[] = [];
  const lease = {
    connection: { setReceiver() {}, onBroken: () => () => {}, txStatus, readyCount: 1, isQuiescent: true },
    release: (options?: { reset?: boolean }) => returned.push(options?.reset === true ? "reset" : "release"),
    discard: (reason: string) => returned.push(`discard:${reason}`),
  };
  return { lease: lease as unknown as Lease, returned };
}

function legSet(): LegSet {
  return new LegSet(
    () => {},
    () => {},
  );
}

describe("LegSet", () => {
  it("gives a connection with no role back at once", () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    legs.release(leg);
    expect(returned).toEqual(["release"]);
    expect(legs.all()).toEqual([]);
  });

  it.each([
    ["pinned", (legs: LegSet, leg: ReturnType<LegSet["open"]>) => legs.pin(leg)],
    ["block", (legs: LegSet, leg: ReturnType<LegSet["open"]>) => legs.block.add(leg)],
  ] as const)("keeps a connection marked %s until the mark goes", (_role, mark) => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    mark(legs, leg);
    legs.release(leg);
    expect(returned).toEqual([]);
    legs.unpin();
    legs.block.clear();
    legs.release(leg);
    expect(returned).toEqual(["release"]);
  });

  it("does not keep a connection for a batch's mark alone: the batch ended", () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    legs.batch.add(leg);
    legs.release(leg);
    expect(returned).toEqual(["release"]);
    expect(legs.batch.size).toBe(0);
  });

  it("waits for the answers owed on a connection before giving it back", async () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    leg.outstanding = 2;
    legs.release(leg);
    leg.answered();
    await Promise.resolve();
    expect(returned).toEqual([]);
    leg.answered();
    await Promise.resolve();
    expect(returned).toEqual(["release"]);
  });

  it("keeps a connection that gained a role while its last answer came in", async () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    leg.outstanding = 1;
    legs.release(leg);
    leg.answered();
    // The answer's own effect (a statement that opened a block) runs before the deferred release.
    legs.block.add(leg);
    await Promise.resolve();
    expect(returned).toEqual([]);
  });

  it("never gives one connection back twice", () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    legs.release(leg);
    legs.release(leg);
    expect(returned).toEqual(["release"]);
  });

  it("closes a connection whose backend still owes a ReadyForQuery instead of lending it", () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    (lease.connection as unknown as { isQuiescent: boolean }).isQuiescent = false;
    legs.release(legs.open("eu", lease));
    expect(returned).toEqual(["discard:cancelled"]);
  });

  it("closes a cancelled connection, and resets one left outside an idle transaction status", () => {
    const legs = legSet();
    const cancelled = fakeLease();
    const leg = legs.open("eu", cancelled.lease);
    leg.retire = true;
    legs.release(leg);
    expect(cancelled.returned).toEqual(["discard:cancelled"]);
    const open = fakeLease("T");
    legs.release(legs.open("eu", open.lease));
    expect(open.returned).toEqual(["reset"]);
  });

  it("keeps a scatter's connection while the scatter reads it, and gives it back once it lets go", () => {
    const legs = legSet();
    const { lease, returned } = fakeLease();
    const leg = legs.open("eu", lease);
    legs.mark(leg, "scatter");
    legs.release(leg);
    expect(returned).toEqual([]);
    legs.unmark(leg, "scatter");
    legs.release(leg);
    expect(returned).toEqual(["release"]);
  });

  it("leaves a scatter's connection out of the session's end until the scatter lets go, then closes it if cancelled", () => {
    const legs = legSet();
    const plain = legs.open("eu", fakeLease().lease);
    const scatter = fakeLease();
    const read = legs.open("us", scatter.lease);
    legs.block.add(read);
    legs.mark(read, "scatter");
    expect(legs.drain()).toEqual([plain]);
    // Only the scatter's role is left: the block is over with the session.
    expect(legs.has(read, "block")).toBe(false);
    expect(scatter.returned).toEqual([]);
    read.retire = true;
    legs.unmark(read, "scatter");
    legs.release(read);
    expect(scatter.returned).toEqual(["discard:cancelled"]);
    expect(legs.all()).toEqual([]);
  });

  it("keeps one connection per region and role, and forgets every role of a lost one", () => {
    const legs = legSet();
    const first = legs.open("eu", fakeLease().lease);
    const second = legs.open("eu", fakeLease().lease);
    legs.batch.add(first);
    legs.batch.add(second);
    expect(legs.batch.values()).toEqual([second]);
    legs.pin(second);
    legs.block.add(second);
    expect([...legs.lost(second)].sort()).toEqual(["batch", "block", "pinned"]);
    expect(legs.pinned).toBeNull();
    expect(legs.block.size).toBe(0);
  });
});

describe("TransactionBlock", () => {
  const settings = new SessionSettings();

  it("goes idle -> open -> failed -> idle, and tells ReadyForQuery I, T, E, I", () => {
    const block = new TransactionBlock(legSet());
    expect([block.state, block.status]).toEqual(["idle", "I"]);
    block.begin("BEGIN", false, settings);
    expect([block.state, block.status]).toEqual(["open", "T"]);
    block.fail();
    expect([block.state, block.status]).toEqual(["failed", "E"]);
    block.recover();
    expect(block.state).toBe("open");
    block.end();
    expect([block.state, block.status]).toEqual(["idle", "I"]);
  });

  it("is failed when a region's server failed the block, whatever the proxy saw", () => {
    const legs = legSet();
    const block = new TransactionBlock(legs);
    block.begin("BEGIN", false, settings).legs.add(legs.open("eu", fakeLease("E").lease));
    expect(block.state).toBe("failed");
  });

  it("keeps a region's old 'E' from failing the block once ROLLBACK TO is on its way, until that server answers again", () => {
    const legs = legSet();
    const block = new TransactionBlock(legs);
    const connection = { setReceiver() {}, onBroken: () => () => {}, txStatus: "E", readyCount: 4 };
    const lease = { connection, release() {}, discard() {} } as unknown as Lease;
    block.begin("BEGIN", false, settings).legs.add(legs.open("eu", lease));
    expect(block.state).toBe("failed");
    block.recover();
    expect(block.state).toBe("open");
    // Its next ReadyForQuery still says 'E' (the ROLLBACK TO failed): the block is failed again.
    connection.readyCount = 5;
    expect(block.state).toBe("failed");
  });

  it("is committing while its two-phase commit runs", () => {
    const block = new TransactionBlock(legSet());
    block.begin("BEGIN", false, settings);
    block.committing("gid-1");
    expect([block.state, block.committingGid]).toEqual(["committing", "gid-1"]);
    block.end();
    expect([block.state, block.committingGid]).toEqual(["idle", null]);
  });

  it("refuses a second block while one is open", () => {
    const block = new TransactionBlock(legSet());
    block.begin("BEGIN", false, settings);
    expect(() => block.begin("BEGIN", false, settings)).toThrow(/already open/);
  });

  it("unmarks its connections at the end and returns them for the caller to give back", () => {
    const legs = legSet();
    const block = new TransactionBlock(legs);
    const leg = legs.open("eu", fakeLease().lease);
    block.begin("BEGIN", false, settings).legs.add(leg);
    expect(block.end()).toEqual([leg]);
    expect(legs.has(leg, "block")).toBe(false);
  });
});
