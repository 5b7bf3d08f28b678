import { explain, schemaInfoFor } from "@geo/core";
import { Analyzer } from "@geo/sql";
import { proxyConsoleReader } from "../console/console-reader.js";
import {
  type CliCommand,
  configPath,
  DEFAULT_CONFIG_FILE,
  stringOption,
  stringsOption,
  UsageError,
} from "./command-line.js";
import { loadRoutingFor } from "./load-routing-for.js";

export interface ExplainCommandOptions {
  /** The configuration, or a file with only its `[[topology.regions]]` and `[[tables]]`. */
  readonly config: string;
  /** The directory TSV; overrides the configuration's `[directory] file`. */
  readonly directory?: string;
  readonly params: readonly string[];
  readonly sql: string;
}

/** `geoproxy explain`: where a statement would run and how its answer would be combined. */
export async function explainCommand(options: ExplainCommandOptions): Promise<string> {
  const { config, topology, directory } = loadRoutingFor(options.config, options.directory);
  // The proxy's console reader, so a console command explains as the proxy would take it.
  const analyzer = await Analyzer.create({
    ...schemaInfoFor(topology),
    cacheSize: 0,
    console: proxyConsoleReader,
  });
  return explain(options.sql, {
    analyzer,
    topology,
    directory,
    ...(options.params.length === 0 ? {} : { params: options.params }),
    gather: config.gather,
  });
}

/** The command line of `geoproxy explain`. */
export const EXPLAIN: CliCommand = {
  name: "explain",
  summary: "show where a statement would run and how its answer would be combined, with no database",
  usage: '[--config <file>] [--directory <file>] [--param <value> ...] [--] "<sql>"',
  description:
    "Plans one statement against the configuration's regions, tables and directory, and prints where it would run and how a multi-region answer would be combined, without connecting to anything. Inside a running proxy, ROUTE <statement> answers the same. Put -- before a statement that starts with a dash (a -- comment).",
  options: [
    {
      name: "config",
      value: "<file>",
      description: "the configuration (TOML); a file with only [[topology.regions]] and [[tables]] is enough",
      default: `${DEFAULT_CONFIG_FILE} in the current folder`,
    },
    { name: "topology", value: "<file>", description: "the same as --config" },
    {
      name: "directory",
      value: "<file>",
      description: "where each key lives, one key<TAB>region per line",
      default: "the configuration's [directory] file; without one, every key is unlisted",
    },
    {
      name: "param",
      value: "<value>",
      multiple: true,
      description: "the value of $1, then $2, ...; without it a parameter-routed statement shows as deferred",
    },
  ],
  examples: [
    `geoproxy explain --config examples/geoproxy.toml "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY id LIMIT 20"`,
    "geoproxy explain --config examples/geoproxy.toml --param bob 'SELECT * FROM users WHERE tenant_id = $1'",
    'geoproxy explain --topology examples/topology.toml --directory examples/keys.tsv "SELECT count(*) FROM orders"',
  ],
  async run(line) {
    const given = stringOption(line, "config");
    const topology = stringOption(line, "topology");
    if (given !== undefined && topology !== undefined)
      throw new UsageError("give --config or --topology, not both", EXPLAIN);
    if (line.positionals.length !== 1) {
      throw new UsageError(
        line.positionals.length === 0
          ? 'explain needs a statement, quoted: "SELECT ..."'
          : `explain takes one statement, quoted as one argument, but was given ${line.positionals.length}`,
        EXPLAIN,
      );
    }
    const directory = stringOption(line, "directory");
    const output = await explainCommand({
      config: configPath(EXPLAIN, given ?? topology),
      ...(directory === undefined ? {} : { directory }),
      params: stringsOption(line, "param"),
      sql: line.positionals[0]!,
    });
    process.stdout.write(`${output}\n`);
    return 0;
  },
};
