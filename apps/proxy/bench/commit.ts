/**
 * Commit cost through geoproxy: a transaction writing one region (one-phase COMMIT) against one
 * writing two regions (PREPARE in both, the decision fsynced to the file log, COMMIT PREPARED in
 * both), each as latency with one client and as throughput with 16. The servers run with fsync and
 * synchronous_commit on, as in production. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/commit.ts [transactions] [seconds]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { startProxy } from "../src/index.js";

const transactions = Number(process.argv[2] ?? 400);
const seconds = Number(process.argv[3] ?? 10);
const CLIENTS = 16;
const KEYS_PER_REGION = 64;

const cluster = await startCluster({
  count: 2,
  initSql: `CREATE TABLE accounts (tenant_id text, id int, balance bigint, PRIMARY KEY (tenant_id, id));`,
  settings: {
    fsync: "on",
    synchronous_commit: "on",
    max_prepared_transactions: "64",
    max_connections: "120",
  },
});
const work = mkdtempSync(join(tmpdir(), "geo-commit-bench-"));
const regionIds = ["eu-west", "us-east"] as const;
const entries: [string, string][] = [];
for (const [i, region] of regionIds.entries()) {
  const keys = Array.from({ length: KEYS_PER_REGION }, (_, k) => `${region}-${k}`);
  for (const key of keys) entries.push([key, region]);
  const client = new pg.Client({ host: "127.0.0.1", port: cluster.servers[i]!.port, user: "postgres" });
  await client.connect();
  await client.query(`INSERT INTO accounts SELECT k, 1, 1000000 FROM unnest($1::text[]) AS k`, [keys]);
  await client.end();
}
const config = parseConfig(
  `${regionIds
    .map(
      (id, i) => `[[topology.regions]]
id = "${id}"
${i === 0 ? "home = true\n" : ""}primary = { host = "127.0.0.1", port = ${cluster.servers[i]!.port}, database = "postgres", user = "postgres" }
`,
    )
    .join("\n")}
[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "tenant_id"

[pool]
max = 40

[txn]
log_path = "${join(work, "decisions.log")}"
`,
  "bench.toml",
);
const proxy = await startProxy({
  config,
  directory: new MemoryDirectory(entries),
  logLevel: "silent",
  port: 0,
});

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One transaction: a row in eu-west, and in us-east too when `twoRegions`. Distinct rows per client: no lock waits. */
async function transaction(client: pg.Client, slot: number, twoRegions: boolean): Promise<number> {
  await client.query("BEGIN");
  await client.query(
    `UPDATE accounts SET balance = balance - 1 WHERE tenant_id = 'eu-west-${slot}' AND id = 1`,
  );
  if (twoRegions) {
    await client.query(
      `UPDATE accounts SET balance = balance + 1 WHERE tenant_id = 'us-east-${slot}' AND id = 1`,
    );
  }
  const c0 = process.hrtime.bigint();
  await client.query("COMMIT");
  const done = process.hrtime.bigint();
  return Number(done - c0) / 1e6;
}

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
  return client;
}

async function latency(
  twoRegions: boolean,
): Promise<{ p50: number; p95: number; p99: number; whole: number }> {
  const client = await connect();
  for (let i = 0; i < 50; i++) await transaction(client, 0, twoRegions);
  const commits: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < transactions; i++) commits.push(await transaction(client, 0, twoRegions));
  const whole = Number(process.hrtime.bigint() - started) / 1e6 / transactions;
  await client.end();
  commits.sort((a, b) => a - b);
  return { p50: percentile(commits, 50), p95: percentile(commits, 95), p99: percentile(commits, 99), whole };
}

async function throughput(twoRegions: boolean): Promise<number> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect()));
  const deadline = Date.now() + seconds * 1000;
  let count = 0;
  await Promise.all(
    clients.map(async (client, slot) => {
      while (Date.now() < deadline) {
        await transaction(client, slot, twoRegions);
        count++;
      }
    }),
  );
  await Promise.all(clients.map((client) => client.end()));
  return count / seconds;
}

try {
  console.log(
    `commit through geoproxy, 2 local regions, fsync on, ${transactions} transactions per latency run`,
  );
  for (const twoRegions of [false, true]) {
    const name = twoRegions ? "two-region (2PC)" : "one-region      ";
    const l = await latency(twoRegions);
    console.log(
      `${name} COMMIT latency p50 ${l.p50.toFixed(2)} ms, p95 ${l.p95.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms; whole transaction ${l.whole.toFixed(2)} ms`,
    );
  }
  for (const twoRegions of [false, true]) {
    const name = twoRegions ? "two-region (2PC)" : "one-region      ";
    const tps = await throughput(twoRegions);
    console.log(`${name} throughput with ${CLIENTS} clients: ${tps.toFixed(0)} commits/s over ${seconds} s`);
  }
} finally {
  await proxy.close({ timeoutMs: 1000 });
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}
