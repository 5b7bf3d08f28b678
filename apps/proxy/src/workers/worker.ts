import type { Directory, GeoConfig } from "@geo/core";
import type { Logger } from "../log.js";
import { type RunningProxy, startProxy } from "../server/proxy.js";
import { type PrimaryOrder, readPrimaryOrder, type WorkerReport } from "./messages.js";
import { workerConfig } from "./worker-config.js";

export interface WorkerOptions {
  readonly config: GeoConfig;
  readonly directory: Directory;
  /** 1-based, from the environment the primary forked this process with. */
  readonly index: number;
  readonly log: Logger;
  readonly shutdownTimeoutMs?: number;
}

function report(message: WorkerReport): void {
  // The primary gone, the cluster ends this process itself.
  if (process.connected) process.send?.(message);
}

/**
 * One worker of `geoproxy serve --workers`: the normal proxy under its own node name, reporting
 * to the primary when it listens, passing cancel keys of other workers to it, and handling those
 * the primary passes on as its own. The primary's order stops it gracefully, and so does SIGTERM
 * sent to it alone; SIGINT is left to the primary (a terminal's Ctrl-C reaches every process of
 * the group, and the primary orders the stop).
 */
export async function serveAsWorker(options: WorkerOptions): Promise<RunningProxy> {
  const config = workerConfig(options.config, options.index);
  const node = config.server.node;
  const log = options.log.child({ worker: options.index, node });
  let proxy: RunningProxy | undefined;
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    if (proxy === undefined) process.exit(0);
    void proxy.close().then(() => process.exit(0));
  };
  const onOrder = (message: unknown): void => {
    const order: PrimaryOrder | null = readPrimaryOrder(message);
    if (order === null) return;
    switch (order.type) {
      case "geoproxy:stop":
        log.info("stop ordered by the primary");
        stop();
        return;
      case "geoproxy:cancel": {
        const matched =
          proxy?.runtime.cancels.cancelHere(order.processId, Buffer.from(order.secretKey, "hex")) ?? false;
        log.info(
          { matched, outcome: matched ? "cancelled" : "unmatched", forwarded: true },
          "cancel request",
        );
        return;
      }
    }
  };
  process.on("message", onOrder);
  process.on("SIGINT", () => undefined);
  try {
    proxy = await startProxy({
      config,
      directory: options.directory,
      logger: log,
      ...(options.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
      worker: {
        index: options.index,
        forward: (worker, processId, secretKey) =>
          report({ type: "geoproxy:cancel", worker, processId, secretKey: secretKey.toString("hex") }),
      },
    });
  } catch (error) {
    // The IPC channel would keep this failed worker alive: once the command line has printed the
    // error and set the exit status (microtasks after this throw), the worker exits with it.
    process.off("message", onOrder);
    setImmediate(() => process.exit());
    throw error;
  }
  process.on("SIGTERM", () => {
    log.info({ signal: "SIGTERM" }, "signal received");
    stop();
  });
  report({ type: "geoproxy:listening", port: proxy.port, node });
  return proxy;
}
