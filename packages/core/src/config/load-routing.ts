import type { MutableDirectory } from "../directory/directory.js";
import { loadDirectoryTsv } from "../directory/directory-tsv.js";
import { MemoryDirectory } from "../directory/memory-directory.js";
import { Topology } from "../topology/topology.js";
import { loadConfig } from "./load-config.js";
import type { GeoConfig } from "./types.js";

export interface Routing {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly directory: MutableDirectory;
}

/**
 * Everything routing needs from files: a configuration (full, or topology and tables only) and,
 * optionally, a directory TSV (without one, every key is unlisted). What `geoproxy explain
 * --topology <toml> --directory <tsv>` loads before analysing.
 */
export function loadRouting(configPath: string, directoryPath?: string): Routing {
  const config = loadConfig(configPath);
  const topology = Topology.fromConfig(config);
  const directory =
    directoryPath === undefined
      ? new MemoryDirectory()
      : loadDirectoryTsv(directoryPath, topology, config.routing.keyType);
  return { config, topology, directory };
}
