import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "@geo/testkit";
import pg from "pg";
import { configToml, directoryTsv, INITIAL_BALANCE, KEYS, REGIONS, SCHEMA_SQL, seedSql } from "./bank.js";
import { ProxyProcess, sleep } from "./proxy-process.js";

export interface DrillOptions {
  /** How long transfers and faults go on. */
  readonly seconds: number;
  /** Concurrent clients sending transfers. Default 6. */
  readonly clients?: number;
  /** Seed of the fault schedule and the transfers, for a repeatable run. */
  readonly seed?: number;
  readonly onProgress?: (line: string) => void;
}

/** What the client was told about a transfer. */
export const TRANSFER_OUTCOMES = ["committed", "failed", "unknown"] as const;
export type TransferOutcome = (typeof TRANSFER_OUTCOMES)[number];

export interface DrillReport {
  readonly attempted: number;
  readonly committed: number;
  readonly failed: number;
  /** The connection went away while COMMIT was in flight, or the outcome was reported unknown (08007). */
  readonly unknown: number;
  /** Committed transfers missing on a side, failed ones applied on a side, unknown ones applied on one side only. */
  readonly lost: number;
  /** The lost transfers by what the client was told, for diagnosis. */
  readonly lostBy: Readonly<Record<TransferOutcome, number>>;
  /** Up to five lost transfers: what the client was told and which sides hold it. */
  readonly lostSamples: readonly string[];
  readonly totalBefore: number;
  readonly totalAfter: number;
  /** Accounts whose balance is not their opening balance plus their recorded transfers. */
  readonly unbalancedAccounts: number;
  /** Prepared transactions left in any region once recovery has run. */
  readonly preparedLeft: number;
  readonly proxyKills: number;
  readonly regionRestarts: number;
  /** Seconds from the end of the faults until nothing was prepared anywhere. */
  readonly recoverySeconds: number;
}

interface Transfer {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly amount: number;
  outcome: TransferOutcome;
  /** The error the client saw, for the report. */
  error?: string;
}

/**
 * Concurrent money transfers between accounts in different regions through geoproxy (a child
 * process), while the proxy is killed with SIGKILL at random moments and restarted, and a region's
 * PostgreSQL is stopped (immediate shutdown: a crash) and started. Afterwards every region is read
 * directly: the total is unchanged, each transfer the client saw commit is on both sides, none it
 * saw fail is on either, and recovery has left nothing prepared.
 */
export async function runDrill(options: DrillOptions): Promise<DrillReport> {
  const progress = options.onProgress ?? (() => undefined);
  const random = prng(options.seed ?? Date.now());
  const work = mkdtempSync(join(tmpdir(), "geo-drill-"));
  // Immediate shutdown loses what sits in WAL buffers: commits must reach the kernel before they answer.
  const cluster = await startCluster({
    count: 3,
    initSql: SCHEMA_SQL,
    settings: { synchronous_commit: "on" },
  });
  const direct: pg.Client[] = [];
  let proxy: ProxyProcess | null = null;
  try {
    for (const [i, region] of REGIONS.entries()) {
      const client = await connectDirect(cluster.servers[i]!.port);
      await client.query(seedSql(region));
      await client.end();
    }
    const proxyPort = await freePort();
    const configPath = join(work, "geoproxy.toml");
    const directoryPath = join(work, "keys.tsv");
    writeFileSync(
      configPath,
      configToml({
        proxyPort,
        regionPorts: cluster.servers.map((s) => s.port),
        logPath: join(work, "decisions.log"),
      }),
    );
    writeFileSync(directoryPath, directoryTsv());
    proxy = new ProxyProcess({
      configPath,
      directoryPath,
      port: proxyPort,
      logPath: join(work, "proxy.log"),
    });
    await proxy.start();
    const totalBefore = KEYS.length * INITIAL_BALANCE;

    const transfers: Transfer[] = [];
    const deadline = Date.now() + options.seconds * 1000;
    let regionRestarts = 0;
    const running = proxy;
    const clients = Array.from({ length: options.clients ?? 6 }, () =>
      transferLoop(proxyPort, deadline, random, transfers),
    );
    const faults = (async () => {
      let round = 0;
      while (Date.now() < deadline - 1500) {
        await sleep(800 + random() * 2200);
        if (Date.now() >= deadline - 1500) break;
        round++;
        if (round % 3 === 0) {
          const index = Math.floor(random() * REGIONS.length);
          progress(`fault ${round}: stopping ${REGIONS[index]}'s PostgreSQL`);
          await cluster.stopServer(index, "immediate");
          await sleep(500 + random() * 1500);
          await cluster.startServer(index);
          regionRestarts++;
        } else {
          progress(`fault ${round}: SIGKILL geoproxy`);
          await running.kill();
          await sleep(100 + random() * 700);
          await running.start();
        }
      }
    })();
    await Promise.all([...clients, faults]);
    if (!running.running) await running.start();

    const recoveryStarted = Date.now();
    for (const server of cluster.servers) direct.push(await connectDirect(server.port));
    let preparedLeft = await countPrepared(direct);
    while (preparedLeft > 0 && Date.now() - recoveryStarted < 60_000) {
      await sleep(250);
      preparedLeft = await countPrepared(direct);
    }
    const recoverySeconds = (Date.now() - recoveryStarted) / 1000;

    const seen = new Map<string, Set<string>>();
    let totalAfter = 0;
    let unbalancedAccounts = 0;
    for (const client of direct) {
      const rows = await client.query<{ tenant_id: string; id: string }>(
        "SELECT tenant_id, id FROM transfers",
      );
      for (const row of rows.rows) {
        const sides = seen.get(row.id) ?? new Set<string>();
        sides.add(row.tenant_id);
        seen.set(row.id, sides);
      }
      const accounts = await client.query<{ tenant_id: string; balance: string; moved: string }>(
        `SELECT a.tenant_id, a.balance, coalesce((SELECT sum(t.amount) FROM transfers t WHERE t.tenant_id = a.tenant_id), 0) AS moved
           FROM accounts a`,
      );
      for (const row of accounts.rows) {
        totalAfter += Number(row.balance);
        if (Number(row.balance) !== INITIAL_BALANCE + Number(row.moved)) unbalancedAccounts++;
      }
    }
    let lost = 0;
    const lostBy: Record<TransferOutcome, number> = { committed: 0, failed: 0, unknown: 0 };
    const lostSamples: string[] = [];
    const counts = { committed: 0, failed: 0, unknown: 0 };
    for (const transfer of transfers) {
      counts[transfer.outcome]++;
      const sides = seen.get(transfer.id) ?? new Set<string>();
      const both = sides.has(transfer.from) && sides.has(transfer.to);
      switch (transfer.outcome) {
        case "committed":
          if (!both) lostBy.committed++;
          break;
        case "failed":
          if (sides.size > 0) lostBy.failed++;
          break;
        case "unknown":
          if (sides.size > 0 && !both) lostBy.unknown++;
          break;
      }
    }
    lost = lostBy.committed + lostBy.failed + lostBy.unknown;
    for (const transfer of transfers) {
      if (lostSamples.length >= 5) break;
      const sides = [...(seen.get(transfer.id) ?? [])];
      const both = sides.includes(transfer.from) && sides.includes(transfer.to);
      const bad =
        (transfer.outcome === "committed" && !both) ||
        (transfer.outcome === "failed" && sides.length > 0) ||
        (transfer.outcome === "unknown" && sides.length > 0 && !both);
      if (bad) {
        lostSamples.push(
          `${transfer.id} ${transfer.from}->${transfer.to}: told ${transfer.outcome}${transfer.error === undefined ? "" : ` (${transfer.error})`}, found on [${sides.join(", ")}]`,
        );
      }
    }
    return {
      attempted: transfers.length,
      ...counts,
      lost,
      lostBy,
      lostSamples,
      totalBefore,
      totalAfter,
      unbalancedAccounts,
      preparedLeft,
      proxyKills: running.kills,
      regionRestarts,
      recoverySeconds,
    };
  } finally {
    await Promise.all(direct.map((client) => client.end().catch(() => undefined)));
    await proxy?.stop().catch(() => undefined);
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** One client: transfers one after another until the deadline, reconnecting after any failure. */
async function transferLoop(
  port: number,
  deadline: number,
  random: () => number,
  transfers: Transfer[],
): Promise<void> {
  let client: pg.Client | null = null;
  while (Date.now() < deadline) {
    if (client === null) {
      client = new pg.Client({
        host: "127.0.0.1",
        port,
        user: "postgres",
        database: "postgres",
        query_timeout: 15_000,
        connectionTimeoutMillis: 2000,
      });
      client.on("error", () => undefined);
      try {
        await client.connect();
      } catch {
        client = null;
        await sleep(100);
        continue;
      }
    }
    const [from, to] = pickPair(random);
    const transfer: Transfer = {
      id: randomUUID(),
      from: from.key,
      to: to.key,
      amount: 1 + Math.floor(random() * 50),
      outcome: "failed",
    };
    transfers.push(transfer);
    if (!(await transfer1(client, transfer))) {
      await client.end().catch(() => undefined);
      client = null;
    }
  }
  await client?.end().catch(() => undefined);
}

/** Runs one transfer; false when the connection is no longer usable. */
async function transfer1(client: pg.Client, transfer: Transfer): Promise<boolean> {
  // Accounts are locked in key order everywhere, so two transfers never wait for each other in a cycle
  // spanning regions (no server could see such a deadlock).
  const [first, second] =
    transfer.from < transfer.to
      ? [
          [transfer.from, -transfer.amount],
          [transfer.to, transfer.amount],
        ]
      : [
          [transfer.to, transfer.amount],
          [transfer.from, -transfer.amount],
        ];
  const statements = [
    "BEGIN",
    `UPDATE accounts SET balance = balance + ${first[1]} WHERE tenant_id = '${first[0]}' AND id = 1`,
    `UPDATE accounts SET balance = balance + ${second[1]} WHERE tenant_id = '${second[0]}' AND id = 1`,
    `INSERT INTO transfers (tenant_id, id, amount) VALUES ('${transfer.from}', '${transfer.id}', ${-transfer.amount})`,
    `INSERT INTO transfers (tenant_id, id, amount) VALUES ('${transfer.to}', '${transfer.id}', ${transfer.amount})`,
  ];
  try {
    for (const sql of statements) await client.query(sql);
  } catch (error) {
    transfer.error = describeError(error);
    // Nothing is prepared before COMMIT: whatever ran is rolled back with the block or the connection.
    transfer.outcome = "failed";
    try {
      await client.query("ROLLBACK");
      return true;
    } catch {
      return false;
    }
  }
  try {
    // COMMIT of a block that failed meanwhile (a region's connection lost between statements)
    // answers ROLLBACK without an error, as PostgreSQL does: only the tag says it did not commit.
    const result = await client.query("COMMIT");
    transfer.outcome = result.command === "COMMIT" ? "committed" : "failed";
    return true;
  } catch (error) {
    transfer.error = `at COMMIT: ${describeError(error)}`;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code !== "08007" && !code.startsWith("08") && !code.startsWith("57P")) {
      transfer.outcome = "failed";
      return true;
    }
    transfer.outcome = "unknown";
    return false;
  }
}

function pickPair(random: () => number): [(typeof KEYS)[number], (typeof KEYS)[number]] {
  for (;;) {
    const a = KEYS[Math.floor(random() * KEYS.length)]!;
    const b = KEYS[Math.floor(random() * KEYS.length)]!;
    if (a.region !== b.region) return [a, b];
  }
}

async function connectDirect(port: number): Promise<pg.Client> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  await client.connect();
  return client;
}

async function countPrepared(clients: readonly pg.Client[]): Promise<number> {
  let total = 0;
  for (const client of clients) {
    const result = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_xacts");
    total += result.rows[0]?.n ?? 0;
  }
  return total;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** mulberry32: a small seeded generator, so a failing schedule can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function describeError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" ? `${code} ${message}` : message;
}
