import { type Directory, loadConfig, loadDirectoryTsv, MemoryDirectory, Topology } from "@geo/core";
import { createLogger, type LogLevel } from "../log.js";
import { type RunningProxy, startProxy } from "../server/proxy.js";

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
  const config = loadConfig(options.config);
  const topology = Topology.fromConfig(config);
  const file = options.directory ?? config.directory.file;
  const directory: Directory =
    file === undefined ? new MemoryDirectory() : loadDirectoryTsv(file, topology, config.routing.keyType);
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
