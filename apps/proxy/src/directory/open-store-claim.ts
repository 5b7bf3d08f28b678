import type { GeoConfig, Topology } from "@geo/core";
import { runOn } from "../distributed/txn-service.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { type ClaimHolder, claimedNames, StoreClaim, storeClaimApplicationName } from "./store-claim.js";

/** `another live proxy (pid 12, application_name "geoproxy store eu1", from 10.0.0.5)`. */
function describeHolder(holder: ClaimHolder): string {
  const parts = [
    holder.pid === undefined ? undefined : `pid ${holder.pid}`,
    holder.applicationName === undefined ? undefined : `application_name "${holder.applicationName}"`,
    holder.clientAddress === undefined ? undefined : `from ${holder.clientAddress}`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? "another live proxy" : `another live proxy (${parts.join(", ")})`;
}

/**
 * The start-up error for a region where another live proxy holds what this one needs: which name,
 * who holds it, and why the two cannot run together yet.
 */
export function claimRefusal(region: string, holders: readonly ClaimHolder[], wantsStore: boolean): string {
  const first = holders.find((holder) => holder.name.kind === "directory") ?? holders[0]!;
  const who = describeHolder(first);
  const fix =
    "several proxies can share one directory store only with [directory_store] shared = true in every one of them: stop the other proxy, or give both shared = true";
  if (first.name.kind === "directory")
    return `[directory_store] table ${first.name.name} is in use in region ${region} by ${who}: two proxies over one directory store would each move and place keys the other does not see; ${fix}`;
  const tables = [...new Set(holders.map((holder) => holder.name.name))].sort().join(", ");
  return wantsStore
    ? `the geo-partitioned tables ${tables} are routed in region ${region} by ${who}, whose directory would not follow this proxy's [directory_store] (its moves and new keys); ${fix}`
    : `the geo-partitioned tables ${tables} are under the [directory_store] of ${who} in region ${region}: this proxy's directory would not follow its moves and new keys; ${fix}`;
}

/** The claim as the proxy runs it: taken at start, retaken where lost, closed at shutdown. */
export interface RunningStoreClaim {
  /** A region down at start, now answering: its claim is taken before it serves. Rejects while refused. */
  take(region: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenStoreClaimOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly log: Logger;
  /** The regions that answered at start. */
  readonly regions: readonly string[];
}

/**
 * Takes the directory claim in `regions` before the proxy serves. Resolves with the running claim
 * (undefined when the proxy routes no geo-partitioned table), or with one line per region where
 * another live proxy holds what this one needs: then nothing is held and the proxy must not start.
 */
export async function openStoreClaim(
  options: OpenStoreClaimOptions,
): Promise<{ claim?: RunningStoreClaim; refused: string[] }> {
  const { config, topology, log } = options;
  const names = claimedNames(config, topology);
  if (names.length === 0) return { refused: [] };
  const applicationName = storeClaimApplicationName(config.server.node, names);
  const claim = new StoreClaim({
    node: config.server.node,
    names,
    connect: async (region) => {
      // Its own connection, never pooled: a pool's reset would drop the locks.
      const connection = await options.pools.connectClaim(region, applicationName);
      return {
        ended: connection.closed,
        query: (sql) => runOn(connection, sql),
        abandon: () => connection.destroy(),
        close: () => connection.close(),
      };
    },
    // The database the proxy's own connections open, where the directory table lives.
    siteOf: (region) => {
      const key = options.pools.keyOf(region, topology.region(region)?.primary.user ?? "postgres");
      return `${key.host}:${key.port}/${key.database}`;
    },
    stepTimeoutMs: config.txn.stepTimeoutMs,
    log,
  });
  let results = await claim.takeAll(options.regions);
  // A proxy killed a moment ago may hold it until its server sees the socket close.
  for (const waitMs of [200, 400, 800]) {
    if (!results.some((result) => result.state === "elsewhere")) break;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    results = await claim.takeAll(options.regions);
  }
  const wantsStore = config.directoryStore !== undefined;
  const refused = results.flatMap((result) =>
    result.state === "elsewhere" ? [claimRefusal(result.region, result.holders, wantsStore)] : [],
  );
  if (refused.length > 0) {
    await claim.close();
    return { refused };
  }
  for (const result of results)
    if (result.state === "unreachable")
      log.warn(
        { region: result.region, err: result.error },
        "cannot take the directory claim in this region yet: it is taken when the region answers",
      );
  const regions = topology.regionIds;
  const timer = setInterval(
    () => void claim.verify(regions).catch(() => undefined),
    config.txn.recoveryIntervalMs,
  );
  timer.unref();
  return {
    refused: [],
    claim: {
      async take(region) {
        const result = await claim.take(region);
        if (result.state === "held") return;
        if (result.state === "unreachable") throw result.error;
        const line = claimRefusal(region, result.holders, wantsStore);
        log.error({ region, holders: result.holders }, line);
        throw new Error(line);
      },
      async close() {
        clearInterval(timer);
        await claim.close();
      },
    },
  };
}
