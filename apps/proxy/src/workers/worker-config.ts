import { ConfigError, type GeoConfig } from "@geo/core";

/** The environment variable that makes a forked `geoproxy serve` worker `i` (1-based). */
export const WORKER_ENV = "GEOPROXY_WORKER";

/** The worker index this process was forked as, or undefined outside a worker. */
export function workerIndexFrom(env: NodeJS.ProcessEnv): number | undefined {
  const value = env[WORKER_ENV];
  if (value === undefined || !/^[1-9]\d*$/.test(value)) return undefined;
  return Number(value);
}

/** Worker `index`'s node name: `<node>-w<index>`. */
export function workerNode(node: string, index: number): string {
  return `${node}-w${index}`;
}

/**
 * Worker `index`'s configuration: a proxy of its own named `<node>-w<index>` (so its own node
 * claim, two-phase commit prefix, decision log and shared-directory heartbeat), its admin port
 * `[admin] port + index - 1` (0 stays 0: a free port each).
 */
export function workerConfig(config: GeoConfig, index: number): GeoConfig {
  const admin = config.admin;
  return {
    ...config,
    server: { ...config.server, node: workerNode(config.server.node, index) },
    ...(admin === undefined
      ? {}
      : { admin: { ...admin, port: admin.port === 0 ? 0 : admin.port + index - 1 } }),
  };
}

/** Refuses `count` workers whose admin ports would run past 65535. */
export function checkAdminPorts(config: GeoConfig, count: number): void {
  const admin = config.admin;
  if (admin === undefined || admin.port === 0 || admin.port + count - 1 <= 65_535) return;
  throw new ConfigError({
    code: "invalid_value",
    file: config.file,
    path: "admin.port",
    detail: `${count} workers serve admin ports ${admin.port} to ${admin.port + count - 1}, past 65535: choose a lower port, or 0 for a free one each`,
  });
}
