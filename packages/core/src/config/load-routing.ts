import type { MutableDirectory } from "../directory/directory.js";
import { loadDirectoryTsv } from "../directory/directory-tsv.js";
import { MemoryDirectory } from "../directory/memory-directory.js";
import { ConfigError } from "../errors/config-error.js";
import { Topology } from "../topology/topology.js";
import { keyLines, lineOf } from "./key-lines.js";
import { readFailure, readText } from "./load-config.js";
import { parseConfig } from "./parse-config.js";
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
 * A directory file the configuration names but that cannot be read is an error of the
 * configuration, pointing at its `[directory] file` line.
 */
export function loadRouting(configPath: string, directoryPath?: string): Routing {
  const text = readText(configPath);
  const config = parseConfig(text, configPath);
  const topology = Topology.fromConfig(config);
  const keyType = config.routing.keyType;
  if (directoryPath !== undefined)
    return { config, topology, directory: loadDirectoryTsv(directoryPath, topology, keyType) };
  const file = config.directory.file;
  if (file === undefined) return { config, topology, directory: new MemoryDirectory() };
  try {
    return { config, topology, directory: loadDirectoryTsv(file, topology, keyType) };
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "unreadable" || error.file !== file) throw error;
    const line = lineOf(keyLines(text), "directory.file");
    throw new ConfigError({
      code: "unreadable",
      file: configPath,
      ...(line === undefined ? {} : { line }),
      path: "directory.file",
      detail: `cannot read the directory file ${file}: ${readFailure(error.cause)}. Create it (one key<TAB>region per line), correct the path (a relative one starts at this file's folder), or remove [directory] file to start with every key unlisted`,
      cause: error.cause,
    });
  }
}
