import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import { type RunningProxy, startProxy } from "../../src/index.js";
import { txnSection } from "./txn-data-dir.js";

/** One real PostgreSQL server behind geoproxy in one-region mode: every table pinned to it. */
export interface OneRegion {
  readonly cluster: PgCluster;
  readonly proxy: RunningProxy;
  /** The server itself, for side-by-side comparisons. */
  readonly direct: { readonly host: string; readonly port: number };
  close(): Promise<void>;
}

/**
 * The geoproxy TOML of a one-region deployment in front of `port`: `server` holds more `[server]`
 * lines, `extra` more sections, appended.
 */
export function oneRegionToml(port: number, extra = "", server = ""): string {
  return `[server]
host = "127.0.0.1"
port = 0
${server}

[[topology.regions]]
id = "only"
home = true
primary = { host = "127.0.0.1", port = ${port}, user = "postgres" }

[routing]
default_placement = { placement = "pinned" }
${txnSection()}
${extra}`;
}

export async function startOneRegion(
  options: { extraToml?: string; initSql?: string } = {},
): Promise<OneRegion> {
  const cluster = await startCluster({
    count: 1,
    ...(options.initSql === undefined ? {} : { initSql: options.initSql }),
  });
  const server = cluster.servers[0]!;
  const proxy = await startProxy({
    config: parseConfig(oneRegionToml(server.port, options.extraToml ?? ""), "one-region.toml"),
    directory: new MemoryDirectory(),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
  return {
    cluster,
    proxy,
    direct: { host: server.host, port: server.port },
    async close() {
      await proxy.close({ timeoutMs: 200 });
      await cluster.stop();
    },
  };
}
