import { MemoryDirectory, parseConfig } from "@geo/core";
import { type RunningProxy, startProxy } from "@geo/proxy";
import { type PgCluster, type PgServer, startCluster } from "@geo/testkit";
import pg from "pg";
import {
  CONTROL_DATABASE,
  GRAMMAR_TABLES_TOML,
  GRAMMAR_TENANTS,
  grammarDataSql,
  grammarSchemaSql,
  INT_CONTROL_DATABASE,
  INT_DATABASE,
  INT_KEY_REGIONS,
  INT_SCHEMA_SQL,
  INT_TABLES_TOML,
  intDataSql,
} from "./grammar/world.js";
import {
  dataSql,
  HOME_REGION,
  type OracleRegion,
  REGIONS,
  SCHEMA_SQL,
  TABLES_TOML,
  TENANTS,
} from "./schema.js";

/** Which world to load: the families' (src/schema.ts) or the grammar generator's (src/grammar/world.ts). */
export type WorldKind = "families" | "grammar";

/** Where a client connects. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** Server settings for the session (libpq's `options`, e.g. `-c enable_hashagg=off`). */
  readonly options?: string | undefined;
}

/** Three regions and a reference server loaded with the oracle's data, and geoproxy over the three. */
export interface OracleWorld {
  readonly reference: Endpoint;
  readonly proxy: Endpoint;
  readonly regions: readonly { readonly region: OracleRegion; readonly server: PgServer }[];
  /** The grammar world only: the integer-keyed database, on the reference and behind a second proxy. */
  readonly intKeys?: { readonly reference: Endpoint; readonly proxy: Endpoint } | undefined;
  /**
   * The grammar world only: the reference server's copies of both worlds with every row loaded in
   * reversed physical order. Graded in the proxy's place they must agree on everything; a
   * difference is the generator's fault (an answer that depends on row order), never the proxy's.
   */
  readonly control?: { readonly text: Endpoint; readonly int: Endpoint } | undefined;
  stop(): Promise<void>;
}

/** The grammar world's database with an ICU default collation (`--collation icu`). */
const ICU_DATABASE = "geo_icu";
const ICU_DATABASE_OPTIONS =
  "TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'und'";

/** Other plans for the control run: sorting instead of hashing, so ties meet in another order. */
const CONTROL_PLANS = "-c enable_hashagg=off -c enable_hashjoin=off -c enable_memoize=off";

/** geoproxy's configuration for the three region servers (format: packages/core CONFIG.md). */
export function oracleConfigToml(
  servers: readonly PgServer[],
  kind: WorldKind | "int-keys" = "families",
  databaseName?: string,
): string {
  const regions = REGIONS.map((region, index) => {
    const server = servers[index]!;
    const database = databaseName ?? (kind === "int-keys" ? INT_DATABASE : server.database);
    return `[[topology.regions]]
id = "${region}"
home = ${region === HOME_REGION}
primary = { host = "${server.host}", port = ${server.port}, database = "${database}", user = "${server.user}" }
`;
  }).join("\n");
  const tables =
    kind === "grammar" ? GRAMMAR_TABLES_TOML : kind === "int-keys" ? INT_TABLES_TOML : TABLES_TOML;
  return `[server]
host = "127.0.0.1"
port = 0

${regions}
${tables}
[pool]
max = 4
`;
}

async function load(server: PgServer, sql: string, database?: string): Promise<void> {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: server.user,
    database: database ?? server.database,
  });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Starts four PostgreSQL servers (three regions and the reference), creates the schema on each,
 * loads each region's rows and every row into the reference, and starts geoproxy in this process.
 */
export async function startOracleWorld(
  options: {
    logLevel?: "silent" | "error" | "warn";
    world?: WorldKind;
    /**
     * The grammar world's default collation: the servers' C (initdb --locale=C), or databases
     * created with the ICU provider (`und`, the root locale), where "Bob" sorts after "alice".
     */
    collation?: "C" | "icu";
  } = {},
): Promise<OracleWorld> {
  const kind = options.world ?? "families";
  const grammar = kind === "grammar";
  const icu = grammar && options.collation === "icu";
  const cluster: PgCluster = await startCluster({
    count: REGIONS.length + 1,
    initSql: grammar ? grammarSchemaSql() : SCHEMA_SQL,
  });
  let proxy: RunningProxy | undefined;
  let intProxy: RunningProxy | undefined;
  try {
    const servers = cluster.servers;
    const reference = servers[REGIONS.length]!;
    if (icu) {
      await Promise.all(
        servers.map(async (server, index) => {
          await load(server, `CREATE DATABASE ${ICU_DATABASE} ${ICU_DATABASE_OPTIONS}`);
          const region = index < REGIONS.length ? REGIONS[index]! : "reference";
          await load(server, `${grammarSchemaSql()}\n${grammarDataSql(region)}`, ICU_DATABASE);
        }),
      );
    } else {
      await Promise.all([
        ...REGIONS.map((region, index) =>
          load(servers[index]!, grammar ? grammarDataSql(region) : dataSql(region)),
        ),
        load(reference, grammar ? grammarDataSql("reference") : dataSql("reference")),
      ]);
    }
    const textDatabase = icu ? ICU_DATABASE : reference.database;
    const config = parseConfig(
      oracleConfigToml(servers, kind, icu ? ICU_DATABASE : undefined),
      "oracle.toml",
    );
    const tenants = grammar ? GRAMMAR_TENANTS : TENANTS;
    const directory = new MemoryDirectory(tenants.map((tenant) => [tenant.key, tenant.region] as const));
    proxy = await startProxy({ config, directory, port: 0, logLevel: options.logLevel ?? "silent" });
    if (grammar) {
      await Promise.all(
        servers.map(async (server, index) => {
          await load(server, `CREATE DATABASE ${INT_DATABASE}`);
          const region = index < REGIONS.length ? REGIONS[index]! : "reference";
          await load(server, `${INT_SCHEMA_SQL}\n${intDataSql(region)}`, INT_DATABASE);
        }),
      );
      await load(reference, `CREATE DATABASE ${CONTROL_DATABASE}${icu ? ` ${ICU_DATABASE_OPTIONS}` : ""}`);
      await load(reference, `CREATE DATABASE ${INT_CONTROL_DATABASE}`);
      await load(reference, `${grammarSchemaSql()}\n${grammarDataSql("reference", true)}`, CONTROL_DATABASE);
      await load(reference, `${INT_SCHEMA_SQL}\n${intDataSql("reference", true)}`, INT_CONTROL_DATABASE);
      intProxy = await startProxy({
        config: parseConfig(oracleConfigToml(servers, "int-keys"), "oracle-int.toml"),
        directory: new MemoryDirectory(
          INT_KEY_REGIONS.map(({ key, region }) => [String(key), region] as const),
        ),
        port: 0,
        logLevel: options.logLevel ?? "silent",
      });
    }
    const running = proxy;
    const runningInt = intProxy;
    let stopping: Promise<void> | undefined;
    return {
      reference: {
        host: reference.host,
        port: reference.port,
        user: reference.user,
        database: textDatabase,
      },
      proxy: { host: running.host, port: running.port, user: "postgres", database: "postgres" },
      regions: REGIONS.map((region, index) => ({ region, server: servers[index]! })),
      intKeys:
        runningInt === undefined
          ? undefined
          : {
              reference: {
                host: reference.host,
                port: reference.port,
                user: reference.user,
                database: INT_DATABASE,
              },
              proxy: { host: runningInt.host, port: runningInt.port, user: "postgres", database: "postgres" },
            },
      control: grammar
        ? {
            text: { ...reference, database: CONTROL_DATABASE, options: CONTROL_PLANS },
            int: { ...reference, database: INT_CONTROL_DATABASE, options: CONTROL_PLANS },
          }
        : undefined,
      stop() {
        stopping ??= (async () => {
          await running.close({ timeoutMs: 1000 }).catch(() => {});
          await runningInt?.close({ timeoutMs: 1000 }).catch(() => {});
          await cluster.stop();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await proxy?.close({ timeoutMs: 0 }).catch(() => {});
    await intProxy?.close({ timeoutMs: 0 }).catch(() => {});
    await cluster.stop();
    throw error;
  }
}
