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
 * Everything routing needs from files: a configuration (full, or topology and tables only) and
 * a directory TSV: `directoryPath` when given, else the configuration's `[directory] file`
 * (without either, every key is unlisted). What `geoproxy serve` and `geoproxy explain` load.
 */
export function loadRouting(configPath: string, directoryPath?: string): Routing {
  const config = loadConfig(configPath);
  const topology = Topology.fromConfig(config);
  const file = directoryPath ?? config.directory.file;
  const directory =
    file === undefined ? new MemoryDirectory() : loadDirectoryTsv(file, topology, config.routing.keyType);
  return { config, topology, directory };
}
