/**
 * The demo: three local PostgreSQL servers as the regions of examples/geoproxy.toml, the example
 * schema in each, the example data split the way geoproxy places it, and geoproxy in front.
 *
 *   pnpm --filter @geo/proxy run demo
 *
 * Ctrl-C stops geoproxy and the servers and removes their data folders.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type Directory,
  type GeoConfig,
  loadConfig,
  loadDirectoryTsv,
  plan,
  type RegionStatement,
  schemaInfoFor,
  Topology,
} from "@geo/core";
import { type Analysis, Analyzer } from "@geo/sql";
import { type PgCluster, PostgresMissingError, RawClient, startCluster } from "@geo/testkit";
import { type LogLevel, type RunningProxy, StartupError, startProxy } from "../src/index.js";

export const EXAMPLES = fileURLToPath(new URL("../../../examples/", import.meta.url));

export interface DemoOptions {
  /**
   * "fixed" (default): the ports examples/geoproxy.toml names (regions 5433-5435, geoproxy 6432).
   * "random": free ports for the servers, the proxy and its admin port, for tests that run beside other things.
   */
  readonly ports?: "fixed" | "random";
  readonly logLevel?: LogLevel;
}

export interface RegionSummary {
  readonly region: string;
  readonly home: boolean;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  /** The server's data folder (removed on stop). */
  readonly dataDir: string;
  /** Rows per example table in this region after loading. */
  readonly rows: ReadonlyMap<string, number>;
}

export interface RunningDemo {
  /** The configuration geoproxy runs with (the example's, with the servers' ports when random). */
  readonly config: GeoConfig;
  readonly cluster: PgCluster;
  readonly proxy: RunningProxy;
  readonly regions: readonly RegionSummary[];
  /** The line to connect with. */
  readonly psql: string;
  /** Stops geoproxy, then the servers, and removes their folders. */
  stop(): Promise<void>;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function run(
  client: RawClient,
  sql: string,
  where: string,
): Promise<readonly (readonly (string | null)[])[]> {
  const result = await client.query(sql);
  if (result.error !== undefined) throw new Error(`${where}: ${result.error.message}`);
  return result.rows;
}

/**
 * Where each statement of the example data goes, decided as geoproxy decides it: a geo-partitioned
 * row in its key's region (the directory's entry, or the home shard the key's hash picks), a pinned
 * table in its region. A replicated table is written in every region: nothing replicates between
 * the demo's servers, so the load writes every copy itself even where a writer is configured.
 */
export function placeStatement(
  analysis: Analysis,
  topology: Topology,
  directory: Directory,
): RegionStatement[] {
  const policies = analysis.tables.map((ref) => topology.tables.get(ref.name));
  if (policies.length > 0 && policies.every((policy) => policy?.placement === "global_replicated"))
    return topology.regionIds.map((region) => ({ region, sql: analysis.text }));
  const decided = plan(analysis, { topology, directory });
  switch (decided.kind) {
    case "single":
      return [{ region: decided.region, sql: decided.sql }];
    case "distributed-write":
      return [...decided.statements];
    case "each-region":
      return decided.regions.map((region) => ({ region, sql: decided.sql }));
    case "scatter":
    case "deferred":
    case "refused":
    case "local":
      throw new Error(`the demo cannot place this statement (${decided.kind}): ${analysis.text}`);
  }
}

/**
 * Creates each region's database, loads examples/schema.sql everywhere and examples/data.sql by
 * placement, through a plain connection to each server (not through the proxy).
 */
async function loadExample(config: GeoConfig, topology: Topology, directory: Directory): Promise<void> {
  const schema = readFileSync(`${EXAMPLES}schema.sql`, "utf8");
  const data = readFileSync(`${EXAMPLES}data.sql`, "utf8");
  const analyzer = await Analyzer.create(schemaInfoFor(topology));
  const perRegion = new Map<string, string[]>(topology.regionIds.map((id) => [id, []]));
  for (const analysis of analyzer.analyzeBatch(data)) {
    for (const statement of placeStatement(analysis, topology, directory))
      perRegion.get(statement.region)!.push(statement.sql);
  }
  await Promise.all(
    config.regions.map(async (region) => {
      const { host, port, database } = region.primary;
      const user = region.primary.user ?? "postgres";
      const admin = await RawClient.connect({ host, port, user, database: "postgres" });
      try {
        await run(admin, `CREATE DATABASE ${quoteIdentifier(database)}`, `${region.id}: create database`);
      } finally {
        await admin.close();
      }
      const client = await RawClient.connect({ host, port, user, database });
      try {
        await run(client, schema, `${region.id}: examples/schema.sql`);
        const statements = perRegion.get(region.id)!;
        if (statements.length > 0)
          await run(client, `BEGIN;\n${statements.join(";\n")};\nCOMMIT`, `${region.id}: examples/data.sql`);
      } finally {
        await client.close();
      }
    }),
  );
}

async function countRows(config: GeoConfig, topology: Topology): Promise<Map<string, Map<string, number>>> {
  const tables = [...topology.tables.keys()];
  const counts = new Map<string, Map<string, number>>();
  await Promise.all(
    config.regions.map(async (region) => {
      const { host, port, database } = region.primary;
      const client = await RawClient.connect({
        host,
        port,
        user: region.primary.user ?? "postgres",
        database,
      });
      try {
        const sql = tables
          .map((table) => `SELECT '${table.replaceAll("'", "''")}', count(*) FROM ${quoteIdentifier(table)}`)
          .join(" UNION ALL ");
        const rows = await run(client, sql, `${region.id}: count rows`);
        counts.set(region.id, new Map(rows.map(([table, count]) => [table!, Number(count)])));
      } finally {
        await client.close();
      }
    }),
  );
  return counts;
}

/** Starts the servers, loads the example and starts geoproxy; stops what it started if a step fails. */
export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const example = loadConfig(`${EXAMPLES}geoproxy.toml`);
  const fixed = (options.ports ?? "fixed") === "fixed";
  const cluster = await startCluster({
    count: example.regions.length,
    ...(fixed ? { ports: example.regions.map((region) => region.primary.port) } : {}),
  });
  let proxy: RunningProxy | undefined;
  try {
    const config: GeoConfig = fixed
      ? example
      : {
          ...example,
          regions: example.regions.map((region, index) => ({
            ...region,
            primary: { ...region.primary, port: cluster.servers[index]!.port },
          })),
          // Free ports throughout: the admin port too, so two such demos can run side by side.
          ...(example.admin === undefined ? {} : { admin: { ...example.admin, port: 0 } }),
        };
    const topology = Topology.fromConfig(config);
    const directory = loadDirectoryTsv(`${EXAMPLES}keys.tsv`, topology, config.routing.keyType);
    await loadExample(config, topology, directory);
    const counts = await countRows(config, topology);
    proxy = await startProxy({
      config,
      directory,
      logLevel: options.logLevel ?? "warn",
      ...(fixed ? {} : { port: 0 }),
    });
    const regions = config.regions.map((region, index) => ({
      region: region.id,
      home: region.home,
      host: region.primary.host,
      port: region.primary.port,
      database: region.primary.database,
      dataDir: cluster.servers[index]!.dataDir,
      rows: counts.get(region.id)!,
    }));
    const database = topology.home.primary.database;
    const user = topology.home.primary.user ?? "postgres";
    const running = proxy;
    let stopping: Promise<void> | undefined;
    return {
      config,
      cluster,
      proxy,
      regions,
      psql: `psql -h ${proxy.host} -p ${proxy.port} -d ${database} -U ${user}`,
      stop() {
        stopping ??= running
          .close({ timeoutMs: 2000 })
          .catch(() => {})
          .then(() => cluster.stop())
          .catch((error: unknown) => {
            // On SIGINT the launcher's own guard has already stopped the servers and removed their
            // folders, so the orderly stop finds nothing left to stop: that is the outcome wanted.
            if (regions.some((region) => existsSync(region.dataDir))) throw error;
          });
        return stopping;
      },
    };
  } catch (error) {
    await proxy?.close({ timeoutMs: 0 }).catch(() => {});
    await cluster.stop();
    throw error;
  }
}

const TRY = [
  "WHERE IS users chandra;",
  "SELECT name, country FROM users WHERE tenant_id = 'chandra';",
  "ROUTE SELECT country, count(*), avg(age) FROM users GROUP BY country;",
];

function describeRegions(demo: RunningDemo): string[] {
  return demo.regions.map((region) => {
    const rows = [...region.rows].map(([table, count]) => `${table} ${count}`).join(", ");
    const name = `${region.region}${region.home ? " (home)" : ""}`;
    return `  ${name.padEnd(16)} ${region.host}:${region.port}/${region.database}  rows: ${rows}`;
  });
}

/**
 * Ctrl-C, from the first moment. A terminal's Ctrl-C reaches every process of the foreground
 * group, and a launcher in between may relay it once more: only the first signal starts the stop,
 * later ones wait for it. The handlers stay installed, so a repeated signal never falls through
 * to the default (exit 130, with the servers' folders half removed). A signal during start-up
 * lets the launcher's guard remove the servers started so far; the start then fails, and that
 * is the stop asked for.
 */
class DemoSignals {
  requested: NodeJS.Signals | undefined;
  #demo: RunningDemo | undefined;

  constructor() {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, (s) => this.#on(s));
  }

  /** The demo is up: stopped at once when a signal came during start-up (then `false`). */
  started(demo: RunningDemo): boolean {
    this.#demo = demo;
    if (this.requested === undefined) return true;
    this.#stop(this.requested);
    return false;
  }

  #on(signal: NodeJS.Signals): void {
    if (this.requested !== undefined) {
      process.stdout.write(`${signal} again: still stopping, please wait...\n`);
      return;
    }
    this.requested = signal;
    if (this.#demo === undefined) {
      process.stdout.write(`\n${signal}: stopping what has started so far...\n`);
      return;
    }
    this.#stop(signal);
  }

  #stop(signal: NodeJS.Signals): void {
    process.stdout.write(`\n${signal}: stopping geoproxy and the PostgreSQL servers...\n`);
    void this.#demo!.stop().then(
      () => {
        process.stdout.write("stopped; the servers' data folders are removed.\n");
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  }
}

async function main(): Promise<number> {
  const signals = new DemoSignals();
  process.stdout.write("geoproxy demo: starting three PostgreSQL servers as regions...\n");
  let demo: RunningDemo;
  try {
    demo = await startDemo({
      logLevel: (process.env["GEOPROXY_LOG_LEVEL"] as LogLevel | undefined) ?? "warn",
    });
  } catch (error) {
    if (signals.requested !== undefined) {
      process.stdout.write("stopped before it was ready; the servers' data folders are removed.\n");
      process.exit(0);
    }
    if (error instanceof PostgresMissingError) {
      process.stderr.write(`geoproxy demo needs PostgreSQL on this machine.\n${error.message}\n`);
    } else if (error instanceof StartupError) {
      process.stderr.write(
        `geoproxy could not start:\n${error.lines.map((line) => `  ${line}`).join("\n")}\n`,
      );
    } else {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`geoproxy demo could not start: ${message}\n`);
      if (message.includes("Address already in use")) {
        const port = /on port (\d+)/.exec(message)?.[1] ?? "5433, 5434 or 5435";
        process.stderr.write(
          `Port ${port}, named by examples/geoproxy.toml, is taken: stop what listens there and run the demo again.\n`,
        );
      }
    }
    return 1;
  }
  if (!signals.started(demo)) return 0;
  const lines = [
    "",
    "Regions (examples/schema.sql in each; examples/data.sql split by examples/keys.tsv and the placement):",
    ...describeRegions(demo),
    "",
    `geoproxy listens on ${demo.proxy.host}:${demo.proxy.port} with examples/geoproxy.toml. Connect with:`,
    "",
    `  ${demo.psql}`,
    "",
    "and try:",
    ...TRY.map((statement) => `  ${statement}`),
    "",
    "The console also has SHOW REGIONS, SHOW PLACEMENT and SHOW POOLS (docs/console.md).",
    `Ctrl-C stops geoproxy and the servers and removes their data folders: ${demo.regions.map((region) => region.dataDir).join(" ")}`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const code = await main();
  if (code !== 0) process.exit(code);
}
