import { MemoryDirectory, parseConfig } from "@geo/core";
import { type RunningProxy, startProxy } from "@geo/proxy";
import { type PgCluster, type PgServer, startCluster } from "@geo/testkit";
import pg from "pg";
import { dataSql, HOME_REGION, REGIONS, SCHEMA_SQL, TABLES_TOML, TENANTS, ticksSql } from "./dataset.js";

export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

/** Three loaded regions, a reference holding every row, and geoproxy (in this process) over the regions. */
export interface FidelityWorld {
  readonly reference: Endpoint;
  readonly proxy: Endpoint;
  readonly regions: readonly PgServer[];
  /** Another in-process geoproxy over the same regions, its configuration extended by `extraToml`. */
  startProxy(extraToml: string): Promise<{ readonly endpoint: Endpoint; close(): Promise<void> }>;
  stop(): Promise<void>;
}

/** geoproxy's configuration for the three region servers (packages/core CONFIG.md). */
export function fidelityConfigToml(
  regions: readonly PgServer[],
  port = 0,
  directoryFile?: string,
  extraToml = "",
): string {
  const regionLines = REGIONS.map((region, index) => {
    const server = regions[index]!;
    return `[[topology.regions]]
id = "${region}"
home = ${region === HOME_REGION}
primary = { host = "${server.host}", port = ${server.port}, database = "${server.database}", user = "${server.user}" }
`;
  }).join("\n");
  const directory = directoryFile === undefined ? "" : `[directory]\nfile = "${directoryFile}"\n\n`;
  return `[server]\nhost = "127.0.0.1"\nport = ${port}\n\n${directory}${regionLines}\n${TABLES_TOML}\n[pool]\nmax = 4\n${extraToml}`;
}

async function load(server: PgServer, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function endpoint(server: { host: string; port: number; user: string; database: string }): Endpoint {
  return { host: server.host, port: server.port, user: server.user, database: server.database };
}

/** Proxies of one world run at once over the same servers: each needs its own node name. */
let nodes = 0;

function proxyOver(regions: readonly PgServer[], extraToml: string): Promise<RunningProxy> {
  const toml = fidelityConfigToml(regions, 0, undefined, extraToml).replace(
    "[server]\n",
    `[server]\nnode = "fidelity-${++nodes}"\n`,
  );
  const config = parseConfig(toml, "fidelity.toml");
  const directory = new MemoryDirectory(TENANTS.map((tenant) => [tenant.key, tenant.region] as const));
  return startProxy({ config, directory, port: 0, logLevel: "silent" });
}

/** Starts four PostgreSQL servers, loads them (the streaming table only in the regions) and geoproxy. */
export async function startFidelityWorld(): Promise<FidelityWorld> {
  const cluster: PgCluster = await startCluster({ count: REGIONS.length + 1, initSql: SCHEMA_SQL });
  let proxy: RunningProxy | undefined;
  try {
    const regions = cluster.servers.slice(0, REGIONS.length);
    const reference = cluster.servers[REGIONS.length]!;
    await Promise.all([
      ...regions.map((server, index) => load(server, ticksSql(index) + dataSql(REGIONS[index]!))),
      load(reference, dataSql("reference")),
    ]);
    proxy = await proxyOver(regions, "");
    const running = proxy;
    const extras: RunningProxy[] = [];
    let stopping: Promise<void> | undefined;
    return {
      reference: endpoint(reference),
      proxy: { host: running.host, port: running.port, user: "postgres", database: "postgres" },
      regions,
      async startProxy(extraToml) {
        const extra = await proxyOver(regions, extraToml);
        extras.push(extra);
        return {
          endpoint: { host: extra.host, port: extra.port, user: "postgres", database: "postgres" },
          close: () => extra.close({ timeoutMs: 1000 }).catch(() => {}),
        };
      },
      stop() {
        stopping ??= (async () => {
          await Promise.all([running, ...extras].map((p) => p.close({ timeoutMs: 1000 }).catch(() => {})));
          await cluster.stop();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await proxy?.close({ timeoutMs: 0 }).catch(() => {});
    await cluster.stop();
    throw error;
  }
}
