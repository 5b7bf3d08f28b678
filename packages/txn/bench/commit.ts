/**
 * Commit latency and throughput: a one-phase COMMIT on one server against a two-phase commit over two
 * real local PostgreSQL servers (file decision log and table decision log). Prints figures, asserts nothing.
 *
 *   pnpm exec tsx bench/commit.ts [iterations] [seconds]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { Coordinator, type DecisionLog, FileDecisionLog, TableDecisionLog } from "../src/index.js";
import { PgConnection } from "../test/support/pg.js";

const iterations = Number(process.argv[2] ?? 500);
const seconds = Number(process.argv[3] ?? 5);
const CONCURRENCY = 16;

// The servers keep their durability here (the launcher turns it off for tests): a commit's cost is
// mostly its fsyncs, and the comparison is meaningless without them.
const cluster = await startCluster({
  count: 2,
  settings: {
    fsync: "on",
    synchronous_commit: "on",
    max_connections: "120",
    max_prepared_transactions: "40",
  },
  initSql: "CREATE TABLE t (id bigserial PRIMARY KEY, v text);",
});
const directory = await mkdtemp(join(tmpdir(), "geo-txn-bench-"));
const urls = cluster.servers.map((s) => s.url);

interface Pair {
  a: PgConnection;
  b: PgConnection;
}

async function openPair(): Promise<Pair> {
  return { a: await PgConnection.open("a", urls[0]!), b: await PgConnection.open("b", urls[1]!) };
}

async function onePhase(pair: Pair): Promise<number> {
  await pair.a.query("BEGIN");
  await pair.a.query("INSERT INTO t (v) VALUES ('one')");
  const start = performance.now();
  await pair.a.query("COMMIT");
  return performance.now() - start;
}

async function twoPhase(pair: Pair, coordinator: Coordinator): Promise<number> {
  await Promise.all([pair.a.query("BEGIN"), pair.b.query("BEGIN")]);
  await Promise.all([
    pair.a.query("INSERT INTO t (v) VALUES ('two')"),
    pair.b.query("INSERT INTO t (v) VALUES ('two')"),
  ]);
  const start = performance.now();
  const result = await coordinator.commit([pair.a, pair.b]);
  if (result.outcome !== "committed") throw new Error(`unexpected outcome ${result.outcome}`);
  return performance.now() - start;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return `p50 ${at(0.5).toFixed(3)} ms  p99 ${at(0.99).toFixed(3)} ms  mean ${mean.toFixed(3)} ms`;
}

async function latency(name: string, run: () => Promise<number>): Promise<void> {
  for (let i = 0; i < Math.min(50, iterations); i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) samples.push(await run());
  console.log(`${name.padEnd(34)} ${summary(samples)}  (n=${iterations})`);
}

async function throughput(name: string, pairs: Pair[], run: (pair: Pair) => Promise<number>): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  let commits = 0;
  const start = performance.now();
  await Promise.all(
    pairs.map(async (pair) => {
      while (performance.now() < deadline) {
        await run(pair);
        commits++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  console.log(
    `${name.padEnd(34)} ${(commits / elapsed).toFixed(0)} commits/s  (${commits} in ${elapsed.toFixed(1)} s)`,
  );
}

let fileLog: FileDecisionLog | undefined;
let tableLog: DecisionLog | undefined;
const opened: Pair[] = [];
try {
  fileLog = await FileDecisionLog.open({ path: join(directory, "decisions.log") });
  // A pool, as a proxy would use: decisions from concurrent commits then share the home server's group commit.
  const home = new pg.Pool({ connectionString: urls[0]!, max: 8 });
  tableLog = await TableDecisionLog.open({
    executor: {
      query: async (sql) => {
        const result = await home.query(sql);
        return { rows: result.rows, command: result.command };
      },
    },
  });
  const withFile = new Coordinator({ prefix: "geo_bench", log: fileLog });
  const withTable = new Coordinator({ prefix: "geo_bench_t", log: tableLog });

  console.log(
    `commit latency, 2 local PostgreSQL servers (fsync on), ${iterations} commits each, one client`,
  );
  const pair = await openPair();
  opened.push(pair);
  await latency("one-phase COMMIT (1 region)", () => onePhase(pair));
  await latency("two-phase, file decision log", () => twoPhase(pair, withFile));
  await latency("two-phase, table decision log", () => twoPhase(pair, withTable));

  console.log(`\nthroughput, ${CONCURRENCY} concurrent clients, ${seconds} s each`);
  const pairs = await Promise.all(Array.from({ length: CONCURRENCY }, openPair));
  opened.push(...pairs);
  await throughput("one-phase COMMIT (1 region)", pairs, onePhase);
  await throughput("two-phase, file decision log", pairs, (p) => twoPhase(p, withFile));
  await throughput("two-phase, table decision log", pairs, (p) => twoPhase(p, withTable));
  await home.end();
} finally {
  await Promise.all(opened.flatMap((p) => [p.a.close(), p.b.close()]));
  await fileLog?.close();
  await cluster.stop();
  await rm(directory, { recursive: true, force: true });
}
