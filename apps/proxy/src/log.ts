import { type Logger, type LoggerOptions, pino } from "pino";

export type { Logger };

/** Log levels accepted by `--log-level` and `startProxy({ logLevel })`. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The proxy's structured logger: one JSON object per line on stdout (pino), `info` for connection
 * events, `debug` for every statement and its route.
 */
export function createLogger(level: LogLevel = "info", destination?: NodeJS.WritableStream): Logger {
  const options: LoggerOptions = { level, base: { name: "geoproxy" } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
