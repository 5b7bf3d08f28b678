import type { SharedDirectoryStatus, SharedPeer } from "@geo/admin";
import { leaseState } from "../directory/lease-state.js";
import type { PeersView } from "../directory/peer-view.js";

/** Where a shared directory's status is read from: what `Moves` holds (`shared`, `holds`). */
export interface SharedStatusSource {
  /** Absent while the directory is not shared. */
  readonly shared: PeersView | undefined;
  /** Holds active now: this proxy's own moves, and the moves of other proxies it follows. */
  readonly holds: { readonly moving: number };
}

/**
 * The shared directory as the dashboard, /snapshot and /metrics show it; undefined when it is not
 * shared. Each peer's lease state is SHOW PEERS' (this proxy's row by its own lease), and this
 * proxy has a row before its first visit read its heartbeat back.
 *
 * @example
 * ```ts
 * const status = sharedDirectoryStatus(moves, topology.home.id);
 * status?.peers.filter((peer) => peer.lease === "held").length;
 * ```
 */
export function sharedDirectoryStatus(
  source: SharedStatusSource,
  home: string,
): SharedDirectoryStatus | undefined {
  const view = source.shared;
  if (view === undefined) return undefined;
  const { leaseMs } = view.config;
  const leaseAgeMs = view.leaseAgeMs();
  const peers: SharedPeer[] = view.peers().map((peer) => {
    const thisProxy = peer.node === view.node;
    return {
      node: peer.node,
      home: peer.home,
      heartbeatAgeMs: Math.round(peer.heartbeatAgeMs),
      lease: leaseState(thisProxy ? leaseAgeMs : peer.heartbeatAgeMs, leaseMs),
      sessions: peer.sessions,
      moves: peer.moves,
      thisProxy,
    };
  });
  if (!peers.some((peer) => peer.thisProxy))
    peers.push({
      node: view.node,
      home,
      heartbeatAgeMs: null,
      lease: leaseState(leaseAgeMs, leaseMs),
      sessions: 0,
      moves: 0,
      thisProxy: true,
    });
  peers.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  // A followed move is a hold here too: what remains of `moving` are this proxy's own moves.
  const followed = view.following().length;
  return {
    authority: view.authority,
    leaseMs,
    leaseAgeMs: leaseAgeMs === undefined ? null : Math.round(leaseAgeMs),
    peers,
    movesHeld: { own: Math.max(0, source.holds.moving - followed), peers: followed },
  };
}
