import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { checkWorkers, MAX_WORKERS, resolveWorkers, type WorkerCount } from "@geo/core";
import { createLogger, LOG_LEVELS, type LogLevel } from "../log.js";
import { type RunningProxy, startProxy } from "../server/proxy.js";
import { WorkerPrimary } from "../workers/primary.js";
import { serveAsWorker } from "../workers/worker.js";
import { checkAdminPorts, workerIndexFrom } from "../workers/worker-config.js";
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
  /** `--workers`; overrides the configuration's `[server] workers`. */
  readonly workers?: WorkerCount;
}

/**
 * `geoproxy serve`: loads the configuration and directory, starts the proxy, and stops it
 * gracefully on SIGTERM or SIGINT (a second signal stops at once). Errors that prevent the start
 * are thrown (ConfigError, StartupError) for the command line to print.
 */
export async function serve(options: ServeOptions): Promise<RunningProxy | undefined> {
  const { config, directory } = loadRoutingFor(options.config, options.directory);
  const logger = createLogger(options.logLevel ?? "info");
  const given = options.workers ?? config.server.workers;
  if (options.workers !== undefined) checkWorkers(config, given, `--workers ${given}`);
  const count = resolveWorkers(given, availableParallelism());
  if (count > 1) {
    const index = cluster.isWorker ? workerIndexFrom(process.env) : undefined;
    if (index !== undefined)
      return serveAsWorker({
        config,
        directory,
        index,
        log: logger,
        ...(options.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
      });
    checkAdminPorts(config, count);
    const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    new WorkerPrimary({ config, count, log: logger, shutdownTimeoutMs }).start();
    return undefined;
  }
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
  usage:
    "[--config <file>] [--directory <file>] [--log-level <level>] [--shutdown-timeout-ms <ms>] [--workers <n>|auto]",
  description:
    "Connects to every region of the configuration, then listens on [server] host:port and sends each statement to the region that holds its rows. Logs are JSON lines on standard output. SIGTERM or SIGINT stops it gracefully; a second signal stops it at once. With --workers, that many processes serve the one port, each a proxy of its own named <node>-w<i>.",
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
    {
      name: "workers",
      value: "<n>",
      description: `worker processes serving the port (1 to ${MAX_WORKERS}, or auto: one per core); each is named <node>-w<i> and needs a shared or fixed directory (docs/proxy.md, "Workers")`,
      default: "the configuration's [server] workers (1: one process)",
    },
  ],
  examples: [
    "geoproxy serve --config examples/geoproxy.toml",
    "geoproxy serve --config geoproxy.toml --directory keys.tsv --log-level debug",
    "geoproxy serve --config geoproxy.toml --workers auto",
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
    const workers = stringOption(line, "workers");
    if (workers !== undefined && workers !== "auto" && !/^\d+$/.test(workers))
      throw new UsageError(`--workers takes a number of processes or auto, not ${workers}`, SERVE);
    if (workers !== undefined && workers !== "auto" && (Number(workers) < 1 || Number(workers) > MAX_WORKERS))
      throw new UsageError(`--workers ${workers} is outside 1..${MAX_WORKERS}`, SERVE);
    const directory = stringOption(line, "directory");
    await serve({
      config: configPath(SERVE, stringOption(line, "config")),
      ...(directory === undefined ? {} : { directory }),
      logLevel: level as LogLevel,
      ...(timeout === undefined ? {} : { shutdownTimeoutMs: Number(timeout) }),
      ...(workers === undefined ? {} : { workers: workers === "auto" ? "auto" : Number(workers) }),
    });
    return -1;
  },
};
