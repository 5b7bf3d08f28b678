/**
 * What reading a region's database collation adds to opening a backend connection: a connection
 * opened plainly against one opened through the collation watch, which reads pg_database on it
 * (each connection is closed before the next opens, so every one is read, the most it can cost).
 * Alternated, one at a time, against one local PostgreSQL. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/collation-read.ts [connections]
 */
import { parseConfig, Topology } from "@geo/core";
import { BackendConnection, type ConnectOptions } from "@geo/pool";
import { startCluster } from "@geo/testkit";
import { createLogger } from "../src/log.js";
import { RegionCollations } from "../src/server/region-collations.js";

const count = Number(process.argv[2] ?? 300);
const cluster = await startCluster({ count: 1 });
const server = cluster.servers[0]!;
const topology = Topology.fromConfig(
  parseConfig(
    `[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = ${server.port}, database = "postgres", user = "postgres" }
`,
    "bench.toml",
  ),
);
const plain = (options: ConnectOptions) => BackendConnection.connect(options);
const watched = new RegionCollations(topology, createLogger("silent")).watch(plain);
const options: ConnectOptions = {
  host: "127.0.0.1",
  port: server.port,
  database: "postgres",
  user: "postgres",
  connectTimeoutMs: 5000,
};

async function timed(connect: typeof plain): Promise<number> {
  const start = process.hrtime.bigint();
  const connection = await connect(options);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await connection.close();
  return ms;
}

const samples = { plain: [] as number[], watched: [] as number[] };
for (let i = 0; i < 20; i++) await timed(i % 2 === 0 ? plain : watched);
for (let i = 0; i < count; i++) {
  samples.plain.push(await timed(plain));
  samples.watched.push(await timed(watched));
}
await cluster.stop();

function quantile(values: number[], q: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
}
for (const [name, values] of Object.entries(samples))
  console.log(
    `${name.padEnd(8)} connections ${values.length}  p50 ${quantile(values, 0.5)} ms  p99 ${quantile(values, 0.99)} ms`,
  );
