import type { RegionId } from "@geo/core";
import type { SharedDirectory } from "../directory/shared-directory.js";
import type { SharedTables } from "../directory/shared-tables.js";
import type { Logger } from "../log.js";
import { MoveAnnouncer } from "./move-announcement.js";

/** A shared directory's part in a move: the announcement to the peers, the authority's entry. */
export interface SharedMoves {
  readonly announcer: MoveAnnouncer;
  readonly tables: SharedTables;
  /** The authority region, or "majority": the new entries are written with versions there. */
  readonly authority: string;
  /**
   * With a majority: the regions the last visit heard from. A move goes ahead without the others
   * when it does not need them; undefined with one authority region (every region takes part).
   */
  reachable(): ReadonlySet<RegionId> | undefined;
  /** The newest version of the key's entry the visits read (a region may be behind it). */
  versionOf(key: string): number | undefined;
  /** With a majority: how many regions make one (a move must reach that many); else undefined. */
  readonly need: number | undefined;
  /** How long a region may take to begin a move's transaction before it is left out (majority). */
  readonly stepMs: number;
  /** With a majority: points the keys at their newest entry read from a majority; false when none answered. */
  refresh(keys: readonly string[]): Promise<boolean>;
  /** Writes entries a region left out of a move missed, when it answers (best effort). */
  catchUp(region: RegionId, rows: readonly (readonly [string, RegionId, number])[]): void;
  /**
   * Keys this proxy just pointed at a region: a visit whose snapshot is older leaves them be.
   * `moved`: the region and versions a committed move gave them.
   */
  assigned(keys: readonly string[], moved?: { to: RegionId; versions: ReadonlyMap<string, number> }): void;
}

/** A shared directory's part in this proxy's moves. */
export function sharedMoves(shared: SharedDirectory, stepMs: number, log: Logger): SharedMoves {
  const majority = shared.quorum.majority;
  return {
    announcer: new MoveAnnouncer(shared, log),
    tables: shared.tables,
    authority: shared.authority,
    reachable: () => (majority ? shared.reachable() : undefined),
    versionOf: (key) => shared.versionOf(key),
    need: majority ? shared.quorum.need : undefined,
    stepMs,
    refresh: (keys) => shared.refresh(keys),
    catchUp: (region, rows) => shared.catchUpLeftOut(region, rows),
    assigned: (keys, moved) => shared.assignedHere(keys, moved),
  };
}
