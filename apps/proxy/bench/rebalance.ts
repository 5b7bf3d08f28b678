/**
 * REBALANCE of 100 keys (one user and two orders each) between two regions, key by key (BATCH 1)
 * and in batches of 25, alternating directions for a few rounds; prints the median of each.
 *
 *   pnpm exec tsx bench/rebalance.ts           (ROUNDS=3 to change the run)
 */
import { parseConfig } from "@geo/core";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { startProxy } from "../src/index.js";
import { regionsToml } from "../test/support/fake-regions.js";

const ROUNDS = Number(process.env["ROUNDS"] ?? 3);
const KEYS = Array.from({ length: 100 }, (_, i) => `'k${String(i).padStart(3, "0")}'`).join(",");
const SCHEMA = `
CREATE TABLE users (tenant_id text NOT NULL, id bigint NOT NULL, name text NOT NULL, PRIMARY KEY (tenant_id, id));
CREATE TABLE orders (tenant_id text NOT NULL, id bigint NOT NULL, user_id bigint NOT NULL, total numeric(12,2) NOT NULL,
  PRIMARY KEY (tenant_id, id), FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id));
CREATE TABLE currencies (code char(3) PRIMARY KEY, name text NOT NULL);
CREATE TABLE eu_audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant_id text NOT NULL, action text NOT NULL);`;

const cluster = await startCluster({ count: 3, initSql: SCHEMA });
const third = cluster.servers[2]!;
const seed = new pg.Client({ host: third.host, port: third.port, user: "postgres", database: "postgres" });
await seed.connect();
await seed.query(`INSERT INTO users (tenant_id, id, name) SELECT k, 1, k FROM unnest(ARRAY[${KEYS}]) AS k;
INSERT INTO orders (tenant_id, id, user_id, total) SELECT k, n, 1, n FROM unnest(ARRAY[${KEYS}]) AS k, generate_series(1, 2) AS n;`);
await seed.end();
const proxy = await startProxy({
  config: parseConfig(
    regionsToml(
      cluster.servers.map((server) => server.port),
      `[auth]\nmethod = "scram-sha-256"\nlookup = false\nusers = [{ name = "ops", password = "ops" }]\noperators = ["ops"]\n\n[txn]\ndecision_log = "table"\n\n[directory_store]\n`,
    ),
    "bench.toml",
  ),
  logLevel: "silent",
  port: 0,
});
const ops = new pg.Client({
  host: "127.0.0.1",
  port: proxy.port,
  user: "ops",
  password: "ops",
  database: "postgres",
});
await ops.connect();

const timings: Record<string, number[]> = { "BATCH 1": [], "BATCH 25": [] };
let from = "ap-south";
let to = "us-east";
for (let round = 0; round < ROUNDS; round++) {
  for (const batch of ["BATCH 1", "BATCH 25"]) {
    const started = performance.now();
    const result = await ops.query(`REBALANCE ${from} TO ${to} LIMIT 100 ${batch}`);
    timings[batch]!.push(performance.now() - started);
    if (result.rowCount !== 100) throw new Error(`moved ${result.rowCount} keys, not 100`);
    [from, to] = [to, from];
  }
}
await ops.end();
await proxy.close({ timeoutMs: 200 });
await cluster.stop();

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `REBALANCE of 100 keys (1 user + 2 orders each) between two PostgreSQL 15 regions, median of ${ROUNDS}:`,
);
for (const [batch, values] of Object.entries(timings)) {
  console.log(
    `  ${batch}: ${median(values).toFixed(0)} ms (${values.map((ms) => ms.toFixed(0)).join(", ")})`,
  );
}
