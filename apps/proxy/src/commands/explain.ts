import { explain, loadConfig, loadDirectoryTsv, MemoryDirectory, schemaInfoFor, Topology } from "@geo/core";
import { Analyzer } from "@geo/sql";

export interface ExplainCommandOptions {
  readonly topology: string;
  /** The directory TSV; overrides the configuration's `[directory] file`. */
  readonly directory?: string;
  readonly params: readonly string[];
  readonly sql: string;
}

/** `geoproxy explain`: where a statement would run and how its answer would be combined. */
export async function explainCommand(options: ExplainCommandOptions): Promise<string> {
  const config = loadConfig(options.topology);
  const topology = Topology.fromConfig(config);
  const file = options.directory ?? config.directory.file;
  const directory =
    file === undefined ? new MemoryDirectory() : loadDirectoryTsv(file, topology, config.routing.keyType);
  const analyzer = await Analyzer.create({ ...schemaInfoFor(topology), cacheSize: 0 });
  return explain(options.sql, {
    analyzer,
    topology,
    directory,
    ...(options.params.length === 0 ? {} : { params: options.params }),
    gather: config.gather,
  });
}
