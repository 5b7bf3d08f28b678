import { describe, expect, it } from "vitest";
import type { Announcement, Peer, PeersView } from "../directory/peer-view.js";
import { sharedDirectoryStatus } from "./shared-status.js";

const LEASE_MS = 1000;

function peer(node: string, home: string, heartbeatAgeMs: number, moves = 0): Peer {
  return { node, home, heartbeatAgeMs, sessions: 3, pid: 100, startedAt: "2026-01-01T00:00:00Z", moves };
}

function move(id: string, mover: string): Announcement {
  return {
    id,
    mover,
    keys: ["k"],
    target: "us-east",
    ageMs: 10,
    confirmedBy: [],
    step: 1,
    confirmations: [],
  };
}

function view(peers: Peer[], leaseAgeMs: number | undefined, following: Announcement[] = []): PeersView {
  return {
    node: "eu-proxy",
    authority: "eu-west",
    config: { leaseMs: LEASE_MS },
    leaseAgeMs: () => leaseAgeMs,
    refusal: () => null,
    peers: () => peers,
    following: () => following,
  };
}

describe("a shared directory's status", () => {
  it("is absent while the directory is not shared", () => {
    expect(sharedDirectoryStatus({ shared: undefined, holds: { moving: 2 } }, "eu-west")).toBeUndefined();
  });

  it("gives each peer SHOW PEERS' lease state by its heartbeat, and this proxy's by its own lease", () => {
    const peers = [
      peer("ap-proxy", "ap-south", 1600, 1),
      // Its heartbeat as the authority read it is old; its lease (the visit's age) is what counts.
      peer("eu-proxy", "eu-west", 1200),
      peer("us-proxy", "us-east", 1000),
      peer("za-proxy", "ap-south", 999.6),
    ];
    const status = sharedDirectoryStatus({ shared: view(peers, 120.4), holds: { moving: 0 } }, "eu-west");
    expect(status).toEqual({
      authority: "eu-west",
      leaseMs: LEASE_MS,
      leaseAgeMs: 120,
      peers: [
        {
          node: "ap-proxy",
          home: "ap-south",
          heartbeatAgeMs: 1600,
          lease: "lapsed",
          sessions: 3,
          moves: 1,
          thisProxy: false,
        },
        {
          node: "eu-proxy",
          home: "eu-west",
          heartbeatAgeMs: 1200,
          lease: "held",
          sessions: 3,
          moves: 0,
          thisProxy: true,
        },
        {
          node: "us-proxy",
          home: "us-east",
          heartbeatAgeMs: 1000,
          lease: "lapsing",
          sessions: 3,
          moves: 0,
          thisProxy: false,
        },
        {
          node: "za-proxy",
          home: "ap-south",
          heartbeatAgeMs: 1000,
          lease: "held",
          sessions: 3,
          moves: 0,
          thisProxy: false,
        },
      ],
      movesHeld: { own: 0, peers: 0 },
    });
  });

  it("lists this proxy before its first visit read its heartbeat back, lapsed without a lease", () => {
    const status = sharedDirectoryStatus(
      { shared: view([peer("us-proxy", "us-east", 10)], undefined), holds: { moving: 0 } },
      "eu-west",
    );
    expect(status?.leaseAgeMs).toBeNull();
    expect(status?.peers.map((p) => [p.node, p.home, p.heartbeatAgeMs, p.lease, p.thisProxy])).toEqual([
      ["eu-proxy", "eu-west", null, "lapsed", true],
      ["us-proxy", "us-east", 10, "held", false],
    ]);
  });

  it("splits the holds active now into this proxy's own moves and the followed moves of peers, own never below 0", () => {
    const following = [move("7", "us-proxy"), move("8", "ap-proxy")];
    const of = (moving: number) =>
      sharedDirectoryStatus({ shared: view([], 50, following), holds: { moving } }, "eu-west")?.movesHeld;
    expect(of(3)).toEqual({ own: 1, peers: 2 });
    expect(of(2)).toEqual({ own: 0, peers: 2 });
    // A followed move whose hold already ended, read between two visits.
    expect(of(1)).toEqual({ own: 0, peers: 2 });
  });
});
