import type { DirectoryStoreConfig, MutableDirectory, RegionId } from "@geo/core";
import type { BackendConnection } from "@geo/pool";
import type { Logger } from "../log.js";
import type { HoldRegistry } from "../moves/hold-registry.js";
import type { RegionRunner } from "./region-runner.js";

/** What a proxy's part in a shared directory is built from (SharedDirectory). */
export interface SharedDirectoryOptions {
  readonly store: DirectoryStoreConfig;
  readonly node: string;
  readonly home: RegionId;
  /** The region the proxies agree in, or "majority": a majority of every region. */
  readonly authority: RegionId | "majority";
  /** The regions reachable at start: with one authority region, each other one is looked at for proxies agreeing there instead. */
  readonly regions: readonly RegionId[];
  /** Every region of the topology: the acceptors of a majority authority. */
  readonly everyRegion: readonly RegionId[];
  readonly runner: RegionRunner;
  /** The directory the router plans with: a visit applies what other proxies wrote. */
  readonly directory: MutableDirectory;
  /** Statements on a key another proxy moves wait here, as they do for this proxy's own moves. */
  readonly holds: HoldRegistry;
  /** Client sessions open now (reported in the heartbeat). */
  readonly sessions: () => number;
  /** Where this proxy's statement decisions are, as its heartbeat tells the peers (`Peer.decisionLog`). */
  readonly decisionLog: string;
  /** A connection of its own to the authority (the home region with a majority), for the wake-up listener (none: polls only). */
  readonly listen?: (applicationName: string) => Promise<BackendConnection>;
  /** True once a recovery pass begun after the call found every move this node prepared settled. */
  readonly settled: () => Promise<boolean>;
  readonly log: Logger;
}
