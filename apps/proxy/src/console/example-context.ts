import { fileURLToPath } from "node:url";
import {
  type Directory,
  type GeoConfig,
  loadConfig,
  loadDirectoryTsv,
  MemoryDirectory,
  plan,
  schemaInfoFor,
  Topology,
} from "@geo/core";
import { Analyzer } from "@geo/sql";
import { proxyConsoleReader } from "./console-reader.js";
import type { ConsoleContext, RegionPoolStats } from "./context.js";

/** The repository's examples folder: the configuration and directory the demo runs with. */
export const EXAMPLES = fileURLToPath(new URL("../../../../examples/", import.meta.url));

export interface ExampleContextOptions {
  readonly config?: GeoConfig;
  readonly directory?: Directory;
  readonly pools?: readonly RegionPoolStats[];
}

/**
 * A console context over examples/geoproxy.toml and examples/keys.tsv with no database behind it:
 * what the console's unit tests run against. Pool figures are whatever the test hands in.
 */
export async function exampleContext(options: ExampleContextOptions = {}): Promise<ConsoleContext> {
  const config = options.config ?? loadConfig(`${EXAMPLES}geoproxy.toml`);
  const topology = Topology.fromConfig(config);
  const directory =
    options.directory ??
    (options.config === undefined
      ? loadDirectoryTsv(`${EXAMPLES}keys.tsv`, topology, config.routing.keyType)
      : new MemoryDirectory());
  const analyzer = await Analyzer.create({ ...schemaInfoFor(topology), console: proxyConsoleReader });
  return {
    config,
    topology,
    directory,
    analyzer,
    plan: (analysis, params) =>
      plan(analysis, {
        topology,
        directory,
        gather: config.gather,
        ...(params === undefined ? {} : { params }),
      }),
    poolStats: () => options.pools ?? [],
    user: "postgres",
  };
}
