/**
 * What sharing the directory costs, over three PostgreSQL regions on loopback, with one authority
 * region and with a majority of the three: a visit (the heartbeat, then the read of what changed,
 * as every proxy runs it each poll_ms), the first write of a new key (one proxy over an unshared
 * store, then two proxies sharing it: the claim adds round trips to the authority, or a Paxos
 * round to a majority), a RELOCATE of one key (alone, then with a peer that must confirm it), and
 * increments of a row through one proxy while the other moves its key (the wait a move adds).
 * Medians, with the spread. Prints figures; asserts nothing.
 *
 *   pnpm exec tsx bench/shared-directory.ts      (ROUNDS=n to change the run)
 */
import { parseConfig } from "@geo/core";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { SharedTables } from "../src/directory/shared-tables.js";
import { type RunningProxy, startProxy } from "../src/index.js";
import { REGIONS, regionsToml } from "../test/support/fake-regions.js";
import { connectDirect, MOVE_SCHEMA } from "../test/support/move-regions.js";

const ROUNDS = Number(process.env["ROUNDS"] ?? 300);
const MOVES = 10;
const SECONDS = Number(process.env["SECONDS"] ?? 15);
const AUTH = `[auth]\nmethod = "scram-sha-256"\nlookup = false\nusers = [{ name = "ops", password = "ops" }]\noperators = ["ops"]\n`;

const cluster = await startCluster({ count: 3, initSql: MOVE_SCHEMA });
const ports = cluster.servers.map((server) => server.port);

function proxy(node: string, store: string): Promise<RunningProxy> {
  const toml = regionsToml(
    ports,
    `${AUTH}\n[txn]\ndecision_log = "table"\n\n[directory_store]\n${store}\n`,
  ).replace("[server]\n", `[server]\nnode = "${node}"\n`);
  return startProxy({ config: parseConfig(toml, "bench.toml"), logLevel: "silent", port: 0 });
}

async function client(port: number): Promise<pg.Client> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "ops", password: "ops", database: "postgres" });
  await c.connect();
  return c;
}

async function timed(rounds: number, run: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run(i);
    out.push(performance.now() - started);
  }
  return out;
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `median ${at(0.5).toFixed(2)} ms (p10 ${at(0.1).toFixed(2)}, p90 ${at(0.9).toFixed(2)}, n ${values.length})`;
}

const lines: string[] = [];

// One proxy over an unshared store: first writes and a move, as before.
{
  const alone = await proxy("alone", "");
  const ops = await client(alone.port);
  const writes = await timed(ROUNDS, (i) =>
    ops.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'x')", [`solo-${i}`]),
  );
  await ops.query("INSERT INTO users (tenant_id, id, name) VALUES ('mover', 1, 'x')");
  const targets = ["us-east", "ap-south"];
  const moves = await timed(MOVES, (i) => ops.query(`RELOCATE mover TO '${targets[i % 2]}'`));
  lines.push(`first write of a new key, one proxy, unshared store: ${summary(writes)}`);
  lines.push(`RELOCATE of one key (1 row), one proxy, unshared store: ${summary(moves)}`);
  await ops.end();
  await alone.close({ timeoutMs: 200 });
}

/** Two proxies sharing the store as `store` says: first writes, moves, increments during moves, a visit. */
async function sharedRun(label: string, store: string, prefix: string): Promise<void> {
  const first = await proxy(`${prefix}-first`, store);
  const second = await proxy(`${prefix}-second`, store);
  const ops = await client(first.port);
  const writes = await timed(ROUNDS, (i) =>
    ops.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'x')", [`${prefix}-${i}`]),
  );
  await ops.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, 'x')", [`${prefix}-traveller`]);
  const targets = ["us-east", "ap-south"];
  const moves = await timed(MOVES, (i) => ops.query(`RELOCATE "${prefix}-traveller" TO '${targets[i % 2]}'`));
  lines.push(`first write of a new key, two proxies, ${label}: ${summary(writes)}`);
  lines.push(`RELOCATE of one key (1 row), two proxies, ${label}: ${summary(moves)}`);

  // Increments of one row through the second proxy while the first moves its key, for SECONDS.
  const writer = await client(second.port);
  const counter = `${prefix}-counter`;
  await writer.query("INSERT INTO users (tenant_id, id, name) VALUES ($1, 1, '0')", [counter]);
  let committed = 0;
  let lost = 0;
  const refused = new Map<string, number>();
  const messages: string[] = [];
  const latencies: number[] = [];
  let stop = false;
  const incrementing = (async () => {
    while (!stop) {
      const started = performance.now();
      try {
        const result = await writer.query(
          "UPDATE users SET name = (name::int + 1)::text WHERE tenant_id = $1 AND id = 1",
          [counter],
        );
        latencies.push(performance.now() - started);
        if (result.rowCount === 1) committed++;
        else lost++;
      } catch (error) {
        const code = (error as { code?: string }).code ?? "?";
        if (!refused.has(code)) messages.push(`${code}: ${(error as Error).message}`);
        refused.set(code, (refused.get(code) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  })();
  const regions = ["us-east", "ap-south", "eu-west"];
  const deadline = performance.now() + SECONDS * 1000;
  let moved = 0;
  const moveTimes: number[] = [];
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    await ops.query(`RELOCATE "${counter}" TO '${regions[moved % 3]}'`);
    moveTimes.push(performance.now() - started);
    moved++;
  }
  stop = true;
  await incrementing;
  const sum = Number(
    (await writer.query("SELECT name FROM users WHERE tenant_id = $1", [counter])).rows[0].name,
  );
  const sorted = [...latencies].sort((a, b) => a - b);
  lines.push(
    `${label}: ${SECONDS} s of increments through one proxy while the other moved the key ${moved} times: ${committed} committed, row value ${sum} (${sum === committed ? "exact" : "WRONG"}), ${lost} UPDATE 0, refused ${JSON.stringify(Object.fromEntries(refused))}; moves ${summary(moveTimes)}; an increment's wait p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(2)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(2)} ms, max ${sorted.at(-1)?.toFixed(2)} ms`,
  );
  for (const message of messages) lines.push(`  first ${message}`);
  await writer.end();
  await ops.end();
  await second.close({ timeoutMs: 200 });
  await first.close({ timeoutMs: 200 });
}

/** A visit as a proxy runs it: the heartbeat, then the read of what changed, in `regions` (each step done at a majority of them). */
async function visitRun(label: string, indexes: readonly number[]): Promise<void> {
  const all = await connectDirect(cluster);
  const directs = indexes.map((index) => all[REGIONS[index]!]);
  for (const client of Object.values(all))
    if (!directs.includes(client)) await client.end().catch(() => undefined);
  const need = Math.floor(directs.length / 2) + 1;
  const majority = <T>(steps: Promise<T>[]): Promise<T[]> =>
    new Promise((resolve, reject) => {
      const done: T[] = [];
      for (const step of steps)
        step.then((value) => {
          done.push(value);
          if (done.length === need) resolve(done);
        }, reject);
    });
  const tables = new SharedTables("geoproxy_directory");
  const snapshots: (string | null)[] = directs.map(() => null);
  const beat = {
    node: "bench",
    home: "eu-west",
    authority: directs.length > 1 ? "majority" : "eu-west",
    pid: process.pid,
    sessions: 0,
    startedAt: new Date(),
    decisionLog: "file",
  };
  // Timed to the majority's answers; the rest are awaited before the next visit, off the clock.
  const visits: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const beats = directs.map((direct) => direct.query(tables.heartbeatSql(beat)));
    await majority(beats);
    const reads = directs.map(async (direct, i) => {
      const read = await direct.query(tables.visitSql(snapshots[i] ?? null));
      snapshots[i] = read.rows[0].snapshot as string;
    });
    await majority(reads);
    visits.push(performance.now() - started);
    await Promise.all([...beats, ...reads]);
  }
  lines.push(`a visit, ${label} (heartbeat + changes): ${summary(visits)}`);
  for (const direct of directs) {
    await direct.query(tables.leaveSql("bench"));
    await direct.end();
  }
}

await sharedRun(
  'authority "eu-west"',
  `shared = true\nauthority = "eu-west"\npoll_ms = 500\nlease_ms = 5000\n`,
  "one",
);
await visitRun('authority "eu-west"', [0]);
await sharedRun(
  'authority "majority"',
  `shared = true\nauthority = "majority"\npoll_ms = 500\nlease_ms = 5000\n`,
  "most",
);
await visitRun('authority "majority" (3 regions)', [0, 1, 2]);
await cluster.stop();

console.log("Sharing the directory, three PostgreSQL 15 regions on loopback:");
for (const line of lines) console.log(`  ${line}`);
