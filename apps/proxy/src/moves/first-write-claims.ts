import { type Directory, placeKey, type Topology } from "@geo/core";
import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SharedDirectory } from "../directory/shared-directory.js";

/** Each first write's key, with the region its own statement's hint names (if it names one). */
export function hintsOf(
  touched: readonly { readonly newKeys: readonly string[] }[],
  analyses: readonly Analysis[],
): Map<string, string | undefined> {
  const hints = new Map<string, string | undefined>();
  for (const [i, keys] of touched.entries())
    for (const key of keys.newKeys) if (!hints.has(key)) hints.set(key, analyses[i]!.hints.region);
  return hints;
}

/**
 * A shared directory's first writes claim their keys in the authority, each for the region this
 * proxy would create it in (its statement's region hint, or the home location's shard its hash
 * picks); a key another proxy claimed first goes where that one placed it. Null once every key
 * has an entry.
 */
export async function claimFirstWrites(
  shared: SharedDirectory,
  topology: Topology,
  directory: Directory,
  keys: readonly string[],
  hints: ReadonlyMap<string, string | undefined>,
): Promise<PgError | null> {
  const byRegion = new Map<string, string[]>();
  for (const key of keys) {
    const hinted = hints.get(key);
    const region =
      hinted !== undefined && topology.hasRegion(hinted)
        ? hinted
        : placeKey(key, topology.routing.keyType, topology, directory);
    const list = byRegion.get(region);
    if (list === undefined) byRegion.set(region, [key]);
    else list.push(key);
  }
  for (const [region, list] of byRegion) {
    const placed = await shared.claim(list, region);
    if (placed instanceof PgError) return placed;
  }
  return null;
}
