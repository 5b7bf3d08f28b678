import type { RegionId } from "@geo/core";
import { type Announcement, announcement, type Peer, readAnnouncements, readPeers } from "./peer-view.js";

/** A key's directory entry where the proxies agree: its region and the version the last move gave it. */
export interface Entry {
  readonly region: RegionId;
  readonly version: number;
}

/** One region's answer to a visit (SharedTables.visitSql); `full` when it read every entry. */
export interface RegionVisit {
  readonly region: RegionId;
  readonly full: boolean;
  readonly read: Record<string, string | null>;
}

/** What the regions that answered a visit say together. */
export interface MergedVisit {
  /** Keys whose newest entry is newer than the one known: to apply. */
  readonly changed: Map<string, Entry>;
  /** Per region, entries it lacks or holds older (it was out of reach): to write there. */
  readonly behind: Map<RegionId, [string, RegionId, number][]>;
  /** Every proxy, each with its youngest heartbeat. */
  readonly peers: Peer[];
  /** The moves announced and not withdrawn in any region that answered. */
  readonly moves: Announcement[];
  /** Every move any region listed: whether each was withdrawn is asked of every region next time. */
  readonly listed: string[];
  /** Per region, moves it still lists that another region says were withdrawn: to withdraw there. */
  readonly revived: Map<RegionId, string[]>;
  /** Keys two regions give different regions under one version (never, unless a table was edited by hand). */
  readonly disputed: string[];
}

/**
 * Merges the answers of the regions a visit reached. With one authority region this is that
 * region's answer. With a majority, each region holds what the steps that reached it wrote: of
 * two entries for a key the higher version wins, a move is live while some region lists it and
 * none marks it withdrawn, a peer's heartbeat is its youngest, and a confirmation counts wherever
 * it is. `known` is updated to the newest entries; a region found behind them gets them back.
 */
export function mergeVisit(visits: readonly RegionVisit[], known: Map<string, Entry>): MergedVisit {
  const disputed: string[] = [];
  const listedBy = new Map<RegionId, Map<string, number>>();
  const touched = new Set<string>();
  for (const visit of visits) {
    const listed = new Map<string, number>();
    listedBy.set(visit.region, listed);
    for (const [key, region, version] of JSON.parse(visit.read["entries"] ?? "[]") as [
      string,
      string,
      number | string | null,
    ][]) {
      const entry: Entry = { region, version: Number(version ?? 0) };
      listed.set(key, entry.version);
      touched.add(key);
      const current = known.get(key);
      // A region that missed a move holds an older version; so does an authority region restored
      // from a backup or failed over to a server that was behind, while the rows have moved since.
      if (current === undefined || entry.version > current.version) known.set(key, entry);
      else if (entry.version === current.version && entry.region !== current.region) disputed.push(key);
    }
  }
  const changed = new Map<string, Entry>();
  for (const key of touched) changed.set(key, known.get(key)!);
  const behind = new Map<RegionId, [string, RegionId, number][]>();
  for (const visit of visits) {
    const listed = listedBy.get(visit.region)!;
    const rows: [string, RegionId, number][] = [];
    for (const [key, version] of listed) {
      const newest = known.get(key)!;
      if (version < newest.version) rows.push([key, newest.region, newest.version]);
    }
    // Only a region read whole shows what it lacks.
    if (visit.full)
      for (const [key, entry] of known) if (!listed.has(key)) rows.push([key, entry.region, entry.version]);
    if (rows.length > 0) behind.set(visit.region, rows);
  }

  const byId = new Map<string, Announcement>();
  const listers = new Map<string, RegionId[]>();
  const ended = new Set<string>();
  for (const visit of visits) {
    for (const id of JSON.parse(visit.read["ended"] ?? "[]") as string[]) ended.add(id);
    for (const move of readAnnouncements(visit.read["moves"])) {
      (listers.get(move.id) ?? listers.set(move.id, []).get(move.id)!).push(visit.region);
      const seen = byId.get(move.id);
      if (seen === undefined) {
        byId.set(move.id, move);
        continue;
      }
      // A region that missed a step or a confirmation gives less: each at its most.
      const steps = new Map<string, number>(seen.confirmations);
      for (const [node, step] of move.confirmations) steps.set(node, Math.max(steps.get(node) ?? 0, step));
      byId.set(
        move.id,
        announcement({
          ...seen,
          ageMs: Math.min(seen.ageMs, move.ageMs),
          step: Math.max(seen.step, move.step),
          confirmations: [...steps],
        }),
      );
    }
  }
  const revived = new Map<RegionId, string[]>();
  for (const id of ended)
    for (const region of listers.get(id) ?? [])
      (revived.get(region) ?? revived.set(region, []).get(region)!).push(id);
  const moves = [...byId.values()]
    .filter((move) => !ended.has(move.id))
    .sort((a, b) => compareIds(a.id, b.id));

  const youngest = new Map<string, Peer>();
  for (const visit of visits)
    for (const peer of readPeers(visit.read["peers"], moves)) {
      const seen = youngest.get(peer.node);
      if (seen === undefined || peer.heartbeatAgeMs < seen.heartbeatAgeMs) youngest.set(peer.node, peer);
    }
  const peers = [...youngest.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return { changed, behind, peers, moves, listed: [...byId.keys()], revived, disputed };
}

function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
