import { randomUUID } from "node:crypto";
import pg from "pg";
import { APP_USER, KEYS } from "./bank.js";
import { sleep } from "./proxy-process.js";

/** What the client was told about a write. */
export const WRITE_OUTCOMES = ["committed", "failed", "unknown"] as const;
export type WriteOutcome = (typeof WRITE_OUTCOMES)[number];

/** One transfer between two keys of different regions, as its client saw it end. */
export interface Transfer {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly amount: number;
  outcome: WriteOutcome;
  /** What a drill that stopped this transfer at a known point expects: on both sides or neither. */
  expect?: "both" | "neither";
  /** The error the client saw, for the report. */
  error?: string;
}

/** One increment of a key's counter (a one-region transaction), as its client saw it end. */
export interface Increment {
  readonly id: string;
  readonly key: string;
  outcome: WriteOutcome;
  error?: string;
}

/**
 * How long a write to each key waited to succeed: from the start of the first attempt after the
 * key's last success (so a run of failures counts from the first of them, and a write that hung
 * counts from its own start) to the end of the next success. An outage still open when the
 * workload stops counts to the stop. Undisturbed, it is the slowest write's latency.
 */
export class Availability {
  private readonly open = new Map<string, number>();
  private readonly longest = new Map<string, number>();

  failed(key: string, startedAt: number): void {
    if (!this.open.has(key)) this.open.set(key, startedAt);
  }

  succeeded(key: string, startedAt: number, endedAt: number): void {
    const since = this.open.get(key) ?? startedAt;
    this.open.delete(key);
    this.longest.set(key, Math.max(this.longest.get(key) ?? 0, endedAt - since));
  }

  /** Closes the outages still open at `stoppedAt`; returns the longest per key. */
  close(stoppedAt: number): Map<string, number> {
    for (const [key, since] of this.open) {
      this.longest.set(key, Math.max(this.longest.get(key) ?? 0, stoppedAt - since));
    }
    this.open.clear();
    return new Map(this.longest);
  }
}

export interface WorkloadState {
  readonly transfers: Transfer[];
  readonly increments: Increment[];
  readonly keyedAvailability: Availability;
  readonly transferAvailability: Availability;
  /** Reads of a counter, in the session that wrote it, that returned less than that session wrote. */
  staleReads: number;
  /** Writes whose UPDATE matched no row: the key's rows were not where the statement was sent. */
  misrouted: number;
  /** Increments acknowledged so far, per key. */
  readonly acked: Map<string, number>;
}

export function newWorkloadState(): WorkloadState {
  return {
    transfers: [],
    increments: [],
    keyedAvailability: new Availability(),
    transferAvailability: new Availability(),
    staleReads: 0,
    misrouted: 0,
    acked: new Map(),
  };
}

/** A client of the proxy as the application role; errors on an idle client are left to the next query. */
export async function connectApp(port: number, queryTimeoutMs = 15_000): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: APP_USER.name,
    password: APP_USER.password,
    database: "postgres",
    query_timeout: queryTimeoutMs,
    connectionTimeoutMillis: 2000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** A lost connection, a server going away or an unknown outcome: COMMIT may or may not have happened. */
export function outcomeUnknown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== "string" || code === "08007" || code.startsWith("08") || code.startsWith("57P");
}

export function describeError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" ? `${code} ${message}` : message;
}

/**
 * The steady keyed workload: one client per key, each incrementing its key's counter and recording
 * the increment next to it in one single-region transaction, then reading the counter back in the
 * same session (read-your-writes: never less than what it wrote).
 */
export async function keyedLoop(
  port: number,
  key: string,
  deadline: number,
  state: WorkloadState,
): Promise<void> {
  let client: pg.Client | null = null;
  while (Date.now() < deadline) {
    const startedAt = Date.now();
    if (client === null) {
      try {
        client = await connectApp(port);
      } catch {
        state.keyedAvailability.failed(key, startedAt);
        await sleep(100);
        continue;
      }
    }
    const increment: Increment = { id: randomUUID(), key, outcome: "failed" };
    state.increments.push(increment);
    let written = -1;
    try {
      await client.query("BEGIN");
      const updated = await client.query<{ n: string }>(
        `UPDATE counters SET n = n + 1 WHERE tenant_id = '${key}' RETURNING n`,
      );
      if (updated.rowCount !== 1) {
        state.misrouted++;
        throw new Error(`UPDATE of ${key}'s counter matched ${updated.rowCount} rows`);
      }
      written = Number(updated.rows[0]!.n);
      await client.query(`INSERT INTO increments (tenant_id, id) VALUES ('${key}', '${increment.id}')`);
    } catch (error) {
      increment.error = describeError(error);
      state.keyedAvailability.failed(key, startedAt);
      client = await rollbackOrDrop(client);
      continue;
    }
    try {
      const result = await client.query("COMMIT");
      increment.outcome = result.command === "COMMIT" ? "committed" : "failed";
    } catch (error) {
      increment.error = `at COMMIT: ${describeError(error)}`;
      increment.outcome = outcomeUnknown(error) ? "unknown" : "failed";
      state.keyedAvailability.failed(key, startedAt);
      if (increment.outcome === "unknown") {
        await client.end().catch(() => undefined);
        client = null;
      }
      continue;
    }
    if (increment.outcome !== "committed") {
      state.keyedAvailability.failed(key, startedAt);
      continue;
    }
    state.keyedAvailability.succeeded(key, startedAt, Date.now());
    state.acked.set(key, (state.acked.get(key) ?? 0) + 1);
    try {
      const read = await client.query<{ n: string }>(`SELECT n FROM counters WHERE tenant_id = '${key}'`);
      if (read.rows.length === 1 && Number(read.rows[0]!.n) < written) state.staleReads++;
    } catch {
      // A read that fails is no answer, stale or not; the next increment tells whether the key is up.
    }
    await sleep(15);
  }
  await client?.end().catch(() => undefined);
}

async function rollbackOrDrop(client: pg.Client): Promise<pg.Client | null> {
  try {
    await client.query("ROLLBACK");
    return client;
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
}

/** What the readers of the replica scenarios saw. */
export interface ReadTally {
  ok: number;
  failed: number;
  /** A read that returned less than an earlier read of the same key in the same session. */
  backwards: number;
  /** A read that missed an increment acknowledged before the read was sent (a copy behind). */
  stale: number;
  readonly availability: Availability;
}

export function newReadTally(): ReadTally {
  return { ok: 0, failed: 0, backwards: 0, stale: 0, availability: new Availability() };
}

/**
 * A read-only client: it never writes, so its reads of the keys' counters may go to a replica.
 * Counts what failed, what missed an increment acknowledged before the read was sent (stale: a
 * replica behind), and what went backwards (a copy behind the one an earlier read came from).
 */
export async function readLoop(
  port: number,
  keys: readonly string[],
  deadline: number,
  state: WorkloadState,
  tally: ReadTally,
): Promise<void> {
  let client: pg.Client | null = null;
  const seen = new Map<string, number>();
  for (let i = 0; Date.now() < deadline; i++) {
    const key = keys[i % keys.length]!;
    const startedAt = Date.now();
    try {
      client ??= await connectApp(port, 5000);
      const floor = state.acked.get(key) ?? 0;
      const read = await client.query<{ n: string }>(`SELECT n FROM counters WHERE tenant_id = '${key}'`);
      const n = Number(read.rows[0]?.n ?? -1);
      if (n < (seen.get(key) ?? 0)) tally.backwards++;
      if (n < floor) tally.stale++;
      seen.set(key, n);
      tally.ok++;
      tally.availability.succeeded(key, startedAt, Date.now());
    } catch {
      tally.failed++;
      tally.availability.failed(key, startedAt);
      await client?.end().catch(() => undefined);
      client = null;
      await sleep(50);
    }
    await sleep(10);
  }
  await client?.end().catch(() => undefined);
}

/** The transfer workload: one client sending transfers between keys of two regions until the deadline. */
export async function transferLoop(
  port: number,
  deadline: number,
  random: () => number,
  state: WorkloadState,
): Promise<void> {
  let client: pg.Client | null = null;
  while (Date.now() < deadline) {
    const startedAt = Date.now();
    const [from, to] = pickPair(random);
    if (client === null) {
      try {
        client = await connectApp(port);
      } catch {
        state.transferAvailability.failed(from.key, startedAt);
        state.transferAvailability.failed(to.key, startedAt);
        await sleep(100);
        continue;
      }
    }
    const transfer: Transfer = {
      id: randomUUID(),
      from: from.key,
      to: to.key,
      amount: 1 + Math.floor(random() * 50),
      outcome: "failed",
    };
    state.transfers.push(transfer);
    const usable = await runTransfer(client, transfer, state);
    if (transfer.outcome === "committed") {
      state.transferAvailability.succeeded(from.key, startedAt, Date.now());
      state.transferAvailability.succeeded(to.key, startedAt, Date.now());
    } else {
      state.transferAvailability.failed(from.key, startedAt);
      state.transferAvailability.failed(to.key, startedAt);
    }
    if (!usable) {
      await client.end().catch(() => undefined);
      client = null;
    }
  }
  await client?.end().catch(() => undefined);
}

/** The statements of one transfer before its COMMIT; accounts in key order (see the README). */
export function transferStatements(transfer: Transfer): string[] {
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
  return [
    `UPDATE accounts SET balance = balance + ${first[1]} WHERE tenant_id = '${first[0]}' AND id = 1`,
    `UPDATE accounts SET balance = balance + ${second[1]} WHERE tenant_id = '${second[0]}' AND id = 1`,
    `INSERT INTO transfers (tenant_id, id, amount) VALUES ('${transfer.from}', '${transfer.id}', ${-transfer.amount})`,
    `INSERT INTO transfers (tenant_id, id, amount) VALUES ('${transfer.to}', '${transfer.id}', ${transfer.amount})`,
  ];
}

/**
 * Runs the statements of a transfer inside BEGIN; false (and the transfer failed, rolled back)
 * when one of them failed. An UPDATE that matches no row is a failure too: the key's account was
 * not where the statement went.
 */
export async function transferBody(
  client: pg.Client,
  transfer: Transfer,
  state: WorkloadState,
): Promise<boolean> {
  try {
    await client.query("BEGIN");
    for (const sql of transferStatements(transfer)) {
      const result = await client.query(sql);
      if (sql.startsWith("UPDATE") && result.rowCount !== 1) {
        state.misrouted++;
        throw new Error(`${sql} matched ${result.rowCount} rows`);
      }
    }
    return true;
  } catch (error) {
    transfer.error = describeError(error);
    // Nothing is prepared before COMMIT: whatever ran is rolled back with the block or the connection.
    transfer.outcome = "failed";
    return false;
  }
}

/** COMMIT of a transfer whose statements ran; false when the connection is no longer usable. */
export async function commitTransfer(client: pg.Client, transfer: Transfer): Promise<boolean> {
  try {
    // COMMIT of a block that failed meanwhile (a region's connection lost between statements)
    // answers ROLLBACK without an error, as PostgreSQL does: only the tag says it did not commit.
    const result = await client.query("COMMIT");
    transfer.outcome = result.command === "COMMIT" ? "committed" : "failed";
    return true;
  } catch (error) {
    transfer.error = `at COMMIT: ${describeError(error)}`;
    if (!outcomeUnknown(error)) {
      transfer.outcome = "failed";
      return true;
    }
    transfer.outcome = "unknown";
    return false;
  }
}

async function runTransfer(client: pg.Client, transfer: Transfer, state: WorkloadState): Promise<boolean> {
  if (!(await transferBody(client, transfer, state))) {
    try {
      await client.query("ROLLBACK");
      return true;
    } catch {
      return false;
    }
  }
  return commitTransfer(client, transfer);
}

function pickPair(random: () => number): [(typeof KEYS)[number], (typeof KEYS)[number]] {
  for (;;) {
    const a = KEYS[Math.floor(random() * KEYS.length)]!;
    const b = KEYS[Math.floor(random() * KEYS.length)]!;
    if (a.region !== b.region) return [a, b];
  }
}
