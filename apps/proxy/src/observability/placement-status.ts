import type { PlacementStatus } from "@geo/admin";
import type { Directory, Topology } from "@geo/core";
import type { MoveProgress } from "../moves/move-keys.js";
import type { BackendTraffic } from "./backend-traffic.js";

/** Directory keys are counted per region at most this often (a large directory is a long walk). */
const KEY_COUNT_INTERVAL_MS = 5000;

/** Bytes received from and sent to one region's servers. */
export interface RegionBytes {
  in: number;
  out: number;
}

/**
 * Where the keys and the traffic are, region by region: the placement map of /snapshot and the
 * regions' byte counters of /metrics. It keeps the last key count, since counting walks the whole
 * directory and a scrape or snapshot may come many times a second.
 */
export class PlacementStatusBook {
  readonly #topology: Topology;
  readonly #directory: Directory;
  readonly #traffic: BackendTraffic | undefined;
  #keyCounts:
    | {
        readonly at: number;
        readonly size: number;
        readonly done: number;
        readonly byRegion: Map<string, number>;
      }
    | undefined;

  constructor(topology: Topology, directory: Directory, traffic: BackendTraffic | undefined) {
    this.#topology = topology;
    this.#directory = directory;
    this.#traffic = traffic;
  }

  /**
   * Keys per region from the directory, rows moved since start, moves running. `progress` is
   * undefined before moves report (no `[directory_store]`): nothing moved, nothing running.
   */
  status(progress: MoveProgress | undefined): PlacementStatus {
    const topology = this.#topology;
    const keys = this.#countKeys(progress?.done ?? 0);
    const bytes = this.bytesByRegion();
    return {
      regions: topology.regionIds.map((id) => ({
        id,
        home: id === topology.home.id,
        keys: keys.get(id) ?? 0,
        rowsIn: progress?.rowsIn.get(id) ?? 0,
        rowsOut: progress?.rowsOut.get(id) ?? 0,
        bytesIn: bytes.get(id)?.in ?? 0,
        bytesOut: bytes.get(id)?.out ?? 0,
      })),
      moves: (progress?.running ?? []).map((move) => ({
        keys: move.keys,
        to: move.to,
        startedAt: move.startedAt.toISOString(),
      })),
      movesDone: progress?.done ?? 0,
    };
  }

  /**
   * Bytes received from and sent to each region's servers (primary and replicas) since start.
   * Traffic is counted by `host:port`, so each address is mapped back to its region here; an
   * address no region lists any more is left out.
   */
  bytesByRegion(): Map<string, RegionBytes> {
    const regionOf = new Map<string, string>();
    for (const region of this.#topology.regions) {
      for (const endpoint of [region.primary, ...region.replicas])
        regionOf.set(`${endpoint.host}:${endpoint.port}`, region.id);
    }
    const out = new Map<string, RegionBytes>();
    for (const [address, bytes] of this.#traffic?.totals() ?? []) {
      const region = regionOf.get(address);
      if (region === undefined) continue;
      const sum = out.get(region) ?? { in: 0, out: 0 };
      sum.in += bytes.in;
      sum.out += bytes.out;
      out.set(region, sum);
    }
    return out;
  }

  /**
   * Keys per region, counted again when keys were added or moved, and at most every few seconds
   * otherwise: the directory's size and the moves done are cheap to read and change whenever a
   * count would, so a repeated read costs nothing while the directory stands still.
   */
  #countKeys(movesDone: number): Map<string, number> {
    const directory = this.#directory;
    const now = Date.now();
    const last = this.#keyCounts;
    if (
      last !== undefined &&
      last.size === directory.size &&
      last.done === movesDone &&
      now - last.at < KEY_COUNT_INTERVAL_MS
    ) {
      return last.byRegion;
    }
    const byRegion = new Map<string, number>();
    for (const [, region] of directory.entries()) byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
    this.#keyCounts = { at: now, size: directory.size, done: movesDone, byRegion };
    return byRegion;
  }
}
