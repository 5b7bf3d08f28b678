import { createLogger, LOG_LEVELS, type LogLevel } from "../log.js";
import { type RunningProxy, startProxy } from "../server/proxy.js";
import {
  type CliCommand,
  configPath,
  DEFAULT_CONFIG_FILE,
  stringOption,
  UsageError,
} from "./command-line.js";
import { loadRoutingFor } from "./load-routing-for.js";

export interface ServeOptions {
  readonly config: string;
  /** The directory TSV; overrides the configuration's `[directory] file`. */
  readonly directory?: string;
  readonly logLevel?: LogLevel;
  readonly shutdownTimeoutMs?: number;
}

/**
 * `geoproxy serve`: loads the configuration and directory, starts the proxy, and stops it
 * gracefully on SIGTERM or SIGINT (a second signal stops at once). Errors that prevent the start
 * are thrown (ConfigError, StartupError) for the command line to print.
 */
export async function serve(options: ServeOptions): Promise<RunningProxy> {
  const { config, directory } = loadRoutingFor(options.config, options.directory);
  const logger = createLogger(options.logLevel ?? "info");
  const proxy = await startProxy({
    config,
    directory,
    logger,
    ...(options.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
  });
  let signals = 0;
  const stop = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    logger.info({ signal }, "signal received");
    void proxy.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return proxy;
}

/** The shutdown timeout when --shutdown-timeout-ms is not given; the proxy's own default. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** The command line of `geoproxy serve`. */
export const SERVE: CliCommand = {
  name: "serve",
  summary: "run the proxy: listen for PostgreSQL clients and route their statements",
  usage: "[--config <file>] [--directory <file>] [--log-level <level>] [--shutdown-timeout-ms <ms>]",
  description:
    "Connects to every region of the configuration, then listens on [server] host:port and sends each statement to the region that holds its rows. Logs are JSON lines on standard output. SIGTERM or SIGINT stops it gracefully; a second signal stops it at once.",
  options: [
    {
      name: "config",
      value: "<file>",
      description: "the configuration (TOML); every field: packages/core/CONFIG.md",
      default: `${DEFAULT_CONFIG_FILE} in the current folder`,
    },
    {
      name: "directory",
      value: "<file>",
      description: "where each key lives, one key<TAB>region per line",
      default: "the configuration's [directory] file; without one, every key is unlisted",
    },
    {
      name: "log-level",
      value: "<level>",
      description: `one of ${LOG_LEVELS.join(", ")}`,
      default: "info",
    },
    {
      name: "shutdown-timeout-ms",
      value: "<ms>",
      description: "how long open transactions may run on after SIGTERM or SIGINT",
      default: String(DEFAULT_SHUTDOWN_TIMEOUT_MS),
    },
  ],
  examples: [
    "geoproxy serve --config examples/geoproxy.toml",
    "geoproxy serve --config geoproxy.toml --directory keys.tsv --log-level debug",
  ],
  async run(line) {
    if (line.positionals.length > 0)
      throw new UsageError(
        `serve takes no arguments, but was given ${JSON.stringify(line.positionals[0])}`,
        SERVE,
      );
    const level = stringOption(line, "log-level") ?? "info";
    if (!(LOG_LEVELS as readonly string[]).includes(level))
      throw new UsageError(`--log-level ${level} is not one of ${LOG_LEVELS.join(", ")}`, SERVE);
    const timeout = stringOption(line, "shutdown-timeout-ms");
    if (timeout !== undefined && !/^\d+$/.test(timeout))
      throw new UsageError(
        `--shutdown-timeout-ms takes a whole number of milliseconds, not ${timeout}`,
        SERVE,
      );
    const directory = stringOption(line, "directory");
    await serve({
      config: configPath(SERVE, stringOption(line, "config")),
      ...(directory === undefined ? {} : { directory }),
      logLevel: level as LogLevel,
      ...(timeout === undefined ? {} : { shutdownTimeoutMs: Number(timeout) }),
    });
    return -1;
  },
};
