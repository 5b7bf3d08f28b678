import type { Directory, GeoConfig, ParamValue, Plan, Topology } from "@geo/core";
import type { PoolStats } from "@geo/pool";
import type { Analysis, Analyzer } from "@geo/sql";

/**
 * Everything a console command may read, handed to `runConsoleCommand` for each command. The
 * console answers from the live state of this proxy: the configuration it runs with, its topology
 * and directory, its analyzer and planner, and its pools.
 */
export interface ConsoleContext {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly directory: Directory;
  readonly analyzer: Analyzer;
  /** The planner bound to the live topology and directory (what routing uses). */
  plan(analysis: Analysis, params?: readonly ParamValue[]): Plan;
  /** One entry per backend pool, with the region it serves. */
  poolStats(): readonly RegionPoolStats[];
  /** The authenticated role of the client running the command. */
  readonly user: string;
}

export interface RegionPoolStats extends PoolStats {
  readonly region: string;
  /** "primary" or "replica". */
  readonly role: string;
}
