/** geoproxy: the PostgreSQL wire-protocol proxy that routes each statement to the region holding its rows. */
export { type ExplainCommandOptions, explainCommand } from "./commands/explain.js";
export { type ServeOptions, serve } from "./commands/serve.js";
export type { ConsoleContext, RegionPoolStats } from "./console/context.js";
export { type ConsoleResult, type ConsoleRows, runConsoleCommand } from "./console/index.js";
export * as errors from "./errors/catalog.js";
export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from "./log.js";
export { type Route, Router } from "./routing/router.js";
export { type RunningProxy, type StartProxyOptions, startProxy } from "./server/proxy.js";
export type { ProxyRuntime } from "./server/runtime.js";
export { StartupError } from "./server/startup-error.js";
