import type { Directory, RegionId } from "@geo/core";
import type { Lease } from "@geo/pool";
import type { PgError } from "@geo/proto";
import { MOVING_SETTING } from "../directory/guard-sql.js";
import { query, type RegionRunner, within } from "../directory/region-runner.js";
import type { SharedTables } from "../directory/shared-tables.js";
import { moveNeedsRegion } from "./move-errors.js";

/**
 * Which regions a move runs in. With one authority region (or none), every region takes part.
 * With a majority, a move may leave out regions that do not answer, but it must reach a majority
 * (`need`), its destination, and every region a key's entry names (a key without one may have
 * rows anywhere). Null when the move may go ahead in `regions`.
 */
export function leaveOut(
  every: readonly RegionId[],
  need: number | undefined,
  directory: Directory,
  keys: readonly string[],
  to: RegionId,
  regions: readonly RegionId[],
): PgError | null {
  if (regions.length === every.length) return null;
  const missing = every.filter((region) => !regions.includes(region));
  if (need !== undefined && regions.length < need)
    return moveNeedsRegion(
      missing.join(", "),
      `a move must reach a majority of the regions, ${need} of ${every.length}`,
    );
  if (!regions.includes(to)) return moveNeedsRegion(to, "it is the destination");
  for (const key of keys) {
    const at = directory.lookup(key);
    if (at === undefined)
      return moveNeedsRegion(
        missing[0]!,
        `key ${JSON.stringify(key)} has no directory entry, so its rows may be there`,
      );
    if (!regions.includes(at)) return moveNeedsRegion(at, `key ${JSON.stringify(key)} lives there`);
  }
  return null;
}

/** The move's transactions begun, one per region, and the regions that did not begin. */
export interface Begun {
  readonly leases: Map<RegionId, Lease>;
  readonly failed: ReadonlyMap<RegionId, unknown>;
}

/**
 * Begins the move's transaction in every region of `regions` at once: BEGIN, `SET LOCAL
 * lock_timeout`, `SET LOCAL geoproxy.moving = on` (the guards let this transaction alone
 * through). With `stepMs` (a majority), a region that has not begun within it is reported failed,
 * and its connection, should it come later, is closed rather than kept.
 */
export async function beginEverywhere(
  runner: RegionRunner,
  regions: readonly RegionId[],
  lockTimeoutMs: number,
  stepMs: number | undefined,
): Promise<Begun> {
  const leases = new Map<RegionId, Lease>();
  const failed = new Map<RegionId, unknown>();
  let over = false;
  await Promise.all(
    regions.map(async (region) => {
      const beginning = (async () => {
        const lease = await runner.acquire(region);
        try {
          await query(
            lease,
            `BEGIN; SET LOCAL lock_timeout = '${lockTimeoutMs}ms'; SET LOCAL ${MOVING_SETTING} = on`,
          );
        } catch (error) {
          lease.discard("a move's BEGIN failed");
          throw error;
        }
        if (over) {
          lease.connection.destroy();
          lease.discard("left out of a move: it did not begin in time");
          return;
        }
        leases.set(region, lease);
      })();
      try {
        await (stepMs === undefined
          ? beginning
          : within(
              beginning,
              stepMs,
              () => new Error(`region ${region} did not begin the move within ${stepMs} ms`),
            ));
      } catch (error) {
        failed.set(region, error);
        beginning.catch(() => undefined);
      }
    }),
  );
  over = true;
  // A region reported failed whose BEGIN had already answered is not taking part either.
  for (const region of failed.keys()) {
    const lease = leases.get(region);
    leases.delete(region);
    if (lease !== undefined) {
      lease.connection.destroy();
      lease.discard("left out of a move: it did not begin in time");
    }
  }
  return { leases, failed };
}

/** The keys' entries where the proxies agree, read in the move's transactions. */
export interface MoveEntries {
  /** Each key's version for the move to write: one above the highest any region had, or any visit read. */
  readonly versions: Map<string, number>;
  /** Each key's newest entry among the regions read. */
  readonly newest: Map<string, { readonly region: RegionId; readonly version: number }>;
}

/** Reads the keys' entries in `regions` (where the proxies agree) inside the move's transactions. */
export async function readEntries(
  tables: SharedTables,
  regions: readonly RegionId[],
  on: (region: RegionId) => Lease,
  keys: readonly string[],
  versionOf: (key: string) => number | undefined,
): Promise<MoveEntries> {
  const versions = new Map<string, number>();
  const newest = new Map<string, { region: RegionId; version: number }>();
  for (const key of keys) versions.set(key, (versionOf(key) ?? 0) + 1);
  const answers = await Promise.all(regions.map((region) => query(on(region), tables.versionsSql(keys))));
  for (const answer of answers)
    for (const row of answer.rows) {
      const key = row["key"]!;
      const version = Number(row["version"]);
      versions.set(key, Math.max(versions.get(key) ?? 1, version + 1));
      if (row["region"] != null && version >= (newest.get(key)?.version ?? -1))
        newest.set(key, { region: row["region"], version });
    }
  return { versions, newest };
}
