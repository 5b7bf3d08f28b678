import { type Directory, type GeoConfig, MemoryDirectory, type Topology } from "@geo/core";
import type { TxnService } from "../distributed/txn-service.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { Moves } from "../moves/moves.js";
import { StartupError } from "./startup-error.js";

/**
 * With `[directory_store]`: the directory's tables in every region, loaded into `directory` (which
 * must be the mutable one the router plans with), and the moves that change it.
 */
export async function startMoves(
  config: GeoConfig,
  topology: Topology,
  pools: RegionPools,
  log: Logger,
  directory: Directory,
  regions: readonly string[],
  txn: TxnService,
  sessions: () => number,
): Promise<Moves | undefined> {
  if (config.directoryStore === undefined) return undefined;
  if (!(directory instanceof MemoryDirectory))
    throw new StartupError([
      `${config.file}: [directory_store] keeps the directory itself; start the proxy without another directory`,
    ]);
  try {
    const abandonedBefore = txn.abandonedSince();
    return await Moves.start({
      config,
      topology,
      pools,
      log,
      directory,
      regions,
      claim: txn.claimGuard(),
      sessions,
      ...(abandonedBefore === undefined ? {} : { abandonedBefore }),
    });
  } catch (error) {
    throw new StartupError([
      `cannot open the directory store ([directory_store] table "${config.directoryStore.table}"): ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
}
