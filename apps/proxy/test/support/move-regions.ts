import { parseConfig } from "@geo/core";
import type { PgCluster } from "@geo/testkit";
import pg from "pg";
import { type RunningProxy, startProxy } from "../../src/index.js";
import { REGIONS, type RegionName, regionsToml } from "./fake-regions.js";

/**
 * The schema of the directory and move tests: users and orders keyed by tenant, orders pointing at
 * their user (so a move must insert parents first and delete them last), a replicated and a
 * pinned table.
 */
export const MOVE_SCHEMA = `
CREATE TABLE users (tenant_id text NOT NULL, id bigint NOT NULL, name text NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE TABLE orders (tenant_id text NOT NULL, id bigint NOT NULL, user_id bigint NOT NULL, total numeric(12,2) NOT NULL,
  PRIMARY KEY (tenant_id, id), FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id));
CREATE TABLE currencies (code char(3) PRIMARY KEY, name text NOT NULL);
CREATE TABLE eu_audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_id text NOT NULL, action text NOT NULL);
`;

/** A client straight to each region's server, bypassing the proxy, to see where rows really are. */
export async function connectDirect(cluster: PgCluster): Promise<Record<RegionName, pg.Client>> {
  const direct = {} as Record<RegionName, pg.Client>;
  for (const [i, region] of REGIONS.entries()) {
    const server = cluster.servers[i]!;
    direct[region] = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await direct[region].connect();
  }
  return direct;
}

/** A client through the proxy on `port` as one of the test roles, whose password is `<role>-secret`. */
export async function connectAs(port: number, user: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user,
    password: `${user}-secret`,
    database: "postgres",
  });
  await client.connect();
  return client;
}

/**
 * A proxy over the cluster's three servers as eu-west, us-east and ap-south, with `extra` TOML;
 * `node` names it (proxies running at once over the same servers need names of their own).
 */
export function startRegionsProxy(
  cluster: PgCluster,
  extra: string,
  file: string,
  node?: string,
): Promise<RunningProxy> {
  const toml = regionsToml(
    cluster.servers.map((s) => s.port),
    extra,
  );
  return startProxy({
    config: parseConfig(
      node === undefined ? toml : toml.replace("[server]\n", `[server]\nnode = "${node}"\n`),
      file,
    ),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 300,
  });
}
