/**
 * Point-read latency and large-result throughput through geoproxy against the same PostgreSQL
 * directly, on one machine. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/relay.ts [reads] [megabytes]
 */
import { MemoryDirectory, parseConfig } from "@geo/core";
import { startCluster } from "@geo/testkit";
import postgres from "postgres";
import { startProxy } from "../src/index.js";

const reads = Number(process.argv[2] ?? 5000);
const megabytes = Number(process.argv[3] ?? 200);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function pointReads(url: string, prepare: boolean): Promise<{ p50: number; p99: number; qps: number }> {
  const sql = postgres(url, { max: 1, prepare, onnotice: () => undefined });
  for (let i = 0; i < 200; i++) await sql`SELECT id, name FROM users WHERE tenant_id = ${"bob"} AND id = 1`;
  const times: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < reads; i++) {
    const t0 = process.hrtime.bigint();
    await sql`SELECT id, name FROM users WHERE tenant_id = ${"bob"} AND id = 1`;
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await sql.end();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), qps: reads / seconds };
}

async function stream(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  const rows = Math.floor((megabytes * 1024 * 1024) / 1000);
  const started = process.hrtime.bigint();
  await sql`SELECT repeat('x', 1000) FROM generate_series(1, ${rows}::int)`.cursor(10_000, () => undefined);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await sql.end();
  return megabytes / seconds;
}

const cluster = await startCluster({
  count: 1,
  initSql:
    "CREATE TABLE users (tenant_id text, id bigint, name text, PRIMARY KEY (tenant_id, id)); INSERT INTO users VALUES ('bob', 1, 'Bob');",
});
const server = cluster.servers[0]!;
const config = parseConfig(
  `[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = ${server.port}, database = "postgres", user = "postgres" }

[[topology.regions]]
id = "us-east"
primary = { host = "127.0.0.1", port = ${server.port}, database = "postgres", user = "postgres" }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"
`,
  "bench.toml",
);
const proxy = await startProxy({
  config,
  directory: new MemoryDirectory([["bob", "us-east"]]),
  logLevel: "silent",
  port: 0,
});
const direct = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
const through = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`;
try {
  console.log(`point reads (${reads} sequential, one connection), latency in µs:`);
  for (const prepare of [true, false]) {
    const d = await pointReads(direct, prepare);
    const p = await pointReads(through, prepare);
    const label = prepare ? "prepared  " : "unprepared";
    console.log(
      `  ${label} direct  p50 ${d.p50.toFixed(0)} p99 ${d.p99.toFixed(0)} (${d.qps.toFixed(0)}/s) | geoproxy p50 ${p.p50.toFixed(0)} p99 ${p.p99.toFixed(0)} (${p.qps.toFixed(0)}/s) | added p50 ${(p.p50 - d.p50).toFixed(0)}`,
    );
  }
  const d = await stream(direct);
  const p = await stream(through);
  console.log(
    `streaming ${megabytes} MB of rows: direct ${d.toFixed(0)} MB/s | geoproxy ${p.toFixed(0)} MB/s`,
  );
} finally {
  await proxy.close();
  await cluster.stop();
}
