import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  AdminError,
  type AdminErrorCode,
  type AdminSource,
  type ProxyMetrics,
  type RunningAdminServer,
  startAdminServer,
} from "@geo/admin";
import type { AdminConfig, GeoConfig } from "@geo/core";
import type { Logger } from "../log.js";
import { StartupError } from "../server/startup-error.js";

export interface AdminPortOptions {
  readonly config: GeoConfig;
  readonly admin: AdminConfig;
  readonly source: AdminSource;
  readonly metrics: ProxyMetrics;
  readonly log: Logger;
}

/** The configuration field each reason for not starting is about. */
function fieldOf(code: AdminErrorCode): string {
  switch (code) {
    case "ADMIN_PASSWORD_REQUIRED":
    case "ADMIN_PASSWORD_EMPTY":
      return "[admin] password";
    case "ADMIN_TLS_INCOMPLETE":
      return "[admin] tls";
    case "ADMIN_PORT_INVALID":
      return "[admin] port";
    case "ADMIN_LISTEN_FAILED":
      return "[admin] host/port";
  }
}

/** A `[tls]` path as written, relative to the configuration file's folder. */
function readPem(config: GeoConfig, field: "cert" | "key"): Buffer | undefined {
  const path = config.tls[field];
  if (path === undefined) return undefined;
  const full = resolve(dirname(config.file), path);
  try {
    return readFileSync(full);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StartupError([
      `${config.file}: [tls] ${field}: cannot read ${full} for the admin port's HTTPS: ${reason}`,
    ]);
  }
}

/**
 * Starts the admin port from `[admin]`. The configuration reader accepts what only the admin port
 * can judge (an empty password, a host beyond loopback without one, `tls = true` without a
 * certificate): its refusal becomes one StartupError line naming the field and the fix.
 */
export async function startAdminPort(options: AdminPortOptions): Promise<RunningAdminServer> {
  const { config, admin } = options;
  const tls = admin.tls
    ? (() => {
        const cert = readPem(config, "cert");
        const key = readPem(config, "key");
        return { ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
      })()
    : undefined;
  try {
    return await startAdminServer({
      host: admin.host,
      port: admin.port,
      ...(admin.password === undefined ? {} : { password: admin.password }),
      ...(tls === undefined ? {} : { tls }),
      source: options.source,
      metrics: options.metrics,
      // Each worker of `geoproxy serve --workers` serves its own admin port (outside a cluster
      // this changes nothing).
      exclusive: true,
      logger: options.log.child({ component: "admin" }),
    });
  } catch (error) {
    if (error instanceof AdminError) {
      throw new StartupError([`${config.file}: ${fieldOf(error.code)}: ${error.message}; ${error.hint}`]);
    }
    throw error;
  }
}
