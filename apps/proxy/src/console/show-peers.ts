import { PgError, SqlState } from "@geo/proto";
import { leaseState } from "../directory/lease-state.js";
import { type ConsoleHandler, showRows } from "./console-command.js";
import { unexpectedArgument } from "./console-errors.js";

export const SHOW_PEERS_COLUMNS = [
  "node",
  "home",
  "this_proxy",
  "heartbeat_age_ms",
  "lease",
  "fenced",
  "sessions",
  "statements",
  "holds",
  "moves_announced",
  "holding",
  "pid",
  "started_at",
] as const;

/**
 * `SHOW PEERS`: every proxy of the shared directory with its heartbeat's age and lease state
 * (`held`; `lapsing` past lease_ms, when it refuses geo-partitioned statements itself; `lapsed`
 * past 1.5 x lease_ms, when movers stop waiting for it), whether it is fenced (refuses statements
 * on geo-partitioned tables), its sessions, statements under way and holds at its heartbeat, and
 * on this proxy's row the moves of other proxies whose keys it holds now.
 */
export const showPeers: ConsoleHandler = {
  syntax: "SHOW PEERS",
  run(argument, ctx) {
    if (argument !== "") return unexpectedArgument("SHOW PEERS", argument);
    const view = ctx.peers;
    if (view === undefined) return notShared();
    const leaseMs = view.config.leaseMs;
    const peers = [...view.peers()];
    if (!peers.some((peer) => peer.node === view.node))
      peers.unshift({
        node: view.node,
        home: "",
        heartbeatAgeMs: Number.NaN,
        sessions: 0,
        pid: process.pid,
        startedAt: "",
        moves: 0,
      });
    const holding = view
      .following()
      .map(
        (move) =>
          `move ${move.id} by ${move.mover}: ${move.keys.length} key${move.keys.length === 1 ? "" : "s"} to ${move.target}`,
      )
      .join("; ");
    const rows = peers.map((peer) => {
      const self = peer.node === view.node;
      const age = self ? view.leaseAgeMs() : peer.heartbeatAgeMs;
      return [
        peer.node,
        peer.home === "" ? null : peer.home,
        self ? "t" : "f",
        age === undefined || Number.isNaN(age) ? null : String(Math.round(age)),
        leaseState(age, leaseMs),
        // Fenced: it refuses statements on geo-partitioned tables (by its own lease, for this row).
        (self ? view.refusal() !== null : leaseState(age, leaseMs) !== "held") ? "t" : "f",
        String(peer.sessions),
        String(peer.statements ?? 0),
        String(peer.holds ?? 0),
        String(peer.moves),
        self ? holding : null,
        String(peer.pid),
        peer.startedAt === "" ? null : peer.startedAt,
      ];
    });
    return showRows(SHOW_PEERS_COLUMNS, rows);
  },
};

/** SHOW PEERS on a proxy whose directory is not shared: it has no peers to list. */
export function notShared(): PgError {
  return new PgError({
    code: SqlState.object_not_in_prerequisite_state,
    message:
      "SHOW PEERS lists the proxies of a shared directory, and this geoproxy's directory is not shared",
    hint: "Set [directory_store] shared = true (with the same store in every proxy) and restart; SHOW HEALTH and SHOW REGIONS describe this proxy alone.",
  });
}
