import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { type RunningProxy, startProxy } from "../../src/index.js";
import { REGIONS, type RegionName, regionsToml } from "./fake-regions.js";

const schemaFile = fileURLToPath(new URL("../../../../examples/schema.sql", import.meta.url));
const keysFile = fileURLToPath(new URL("../../../../examples/keys.tsv", import.meta.url));

/** The example directory plus keys "0".."9" for the load test, spread over the regions. */
export function directoryEntries(): [string, RegionName][] {
  const entries: [string, RegionName][] = [];
  for (const line of readFileSync(keysFile, "utf8").split("\n")) {
    const [key, region] = line.split("\t");
    if (key === undefined || region === undefined || key.startsWith("#")) continue;
    entries.push([key, region.trim() as RegionName]);
  }
  for (let i = 0; i < 10; i++) entries.push([String(i), REGIONS[i % 3]!]);
  return entries;
}

/** Rows of every table for one key, as INSERT statements. */
function rowsOf(key: string, index: number): string {
  const users = [1, 2, 3]
    .map(
      (id) =>
        `('${key}', ${id}, '${key}-${id}', '${["FR", "US", "IN", "DE"][(index + id) % 4]}', ${20 + ((index * 7 + id) % 50)}, timestamptz '2026-02-01 00:00:00+00' + interval '${index * 3 + id} days')`,
    )
    .join(", ");
  const orders = [1, 2, 3, 4, 5]
    .map(
      (id) =>
        `('${key}', ${id}, ${1 + (id % 3)}, ${id}, '${["EUR", "USD", "INR"][id % 3]}', ${(index * 13 + id * 7.25).toFixed(2)}, '${id % 2 === 0 ? "open" : "paid"}', timestamptz '2026-01-01 00:00:00+00' + interval '${index * 5 + id} hours')`,
    )
    .join(", ");
  return `INSERT INTO users (tenant_id, id, name, country, age, created_at) VALUES ${users};
INSERT INTO orders (tenant_id, id, user_id, buyer, currency, total, status, created_at) VALUES ${orders};`;
}

const REPLICATED = `INSERT INTO currencies (code, name, digits) VALUES ('EUR', 'Euro', 2), ('USD', 'US dollar', 2), ('INR', 'Indian rupee', 2);
INSERT INTO eu_audit (tenant_id, action, at) VALUES ('alice', 'login', '2026-03-01 00:00:00+00');`;

export interface RealRegions {
  readonly cluster: PgCluster;
  readonly proxy: RunningProxy;
  /** A client straight to each region's server. */
  readonly direct: Record<RegionName, pg.Client>;
  /** One PostgreSQL database holding every row: what each routed answer must equal. */
  readonly reference: pg.Client;
  readonly entries: [string, RegionName][];
  close(): Promise<void>;
}

/**
 * Three real PostgreSQL servers as regions with the example schema, each holding the rows of the
 * keys the directory places there (replicated tables everywhere, eu_audit in eu-west), a
 * reference database on the first server holding every row, and a proxy in front.
 */
export async function startRealRegions(extraToml = ""): Promise<RealRegions> {
  const schema = readFileSync(schemaFile, "utf8");
  const cluster = await startCluster({ count: 3, initSql: `${schema}\nCREATE DATABASE reference;` });
  const entries = directoryEntries();
  const direct = {} as Record<RegionName, pg.Client>;
  for (const [i, region] of REGIONS.entries()) {
    const server = cluster.servers[i]!;
    const client = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await client.connect();
    direct[region] = client;
  }
  const first = cluster.servers[0]!;
  const reference = new pg.Client({
    host: first.host,
    port: first.port,
    user: "postgres",
    database: "reference",
  });
  await reference.connect();
  await reference.query(schema);
  let all = REPLICATED;
  for (const region of REGIONS) {
    let sql = region === "eu-west" ? REPLICATED : REPLICATED.split("\n")[0]!;
    for (const [index, [key, home]] of entries.entries())
      if (home === region) sql += `\n${rowsOf(key, index)}`;
    await direct[region].query(sql);
  }
  for (const [index, [key]] of entries.entries()) all += `\n${rowsOf(key, index)}`;
  await reference.query(all);
  const config = parseConfig(
    regionsToml(
      cluster.servers.map((s) => s.port),
      extraToml,
    ),
    "e2e.toml",
  );
  const proxy = await startProxy({
    config,
    directory: new MemoryDirectory(entries),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
  return {
    cluster,
    proxy,
    direct,
    reference,
    entries,
    async close() {
      await proxy.close({ timeoutMs: 200 });
      await Promise.all(
        [...Object.values(direct), reference].map((client) => client.end().catch(() => undefined)),
      );
      await cluster.stop();
    },
  };
}
