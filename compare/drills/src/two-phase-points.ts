import { randomUUID } from "node:crypto";
import type pg from "pg";
import { DECISION_TABLE } from "./bank.js";
import { freezeBackend } from "./freeze.js";
import { sleep } from "./proxy-process.js";
import type { DrillContext } from "./run-drill.js";
import { commitTransfer, connectApp, type Transfer, transferBody } from "./workloads.js";

/**
 * The points of a two-phase commit at which a drill kills the proxy. Each is reached from outside
 * the proxy, with no hook in it: a participant's backend frozen with SIGSTOP cannot answer (or
 * act on) what the coordinator sends it, and a lock held on the table decision log holds the
 * decision write. A frozen backend keeps what it was sent in its socket; once the proxy is dead
 * and it is woken, it may still run it, as a server that was slow would.
 */
export const TWO_PHASE_POINTS = [
  "before-prepare",
  "some-prepared",
  "all-prepared",
  "after-decision",
  "some-committed",
] as const;
export type TwoPhasePoint = (typeof TWO_PHASE_POINTS)[number];

/** Whether a point needs the table decision log (its write is held by a lock on the table). */
export function needsTableLog(point: TwoPhasePoint): boolean {
  return point === "all-prepared" || point === "after-decision" || point === "some-committed";
}

/** Where the transfer must end once recovery ran: undecided means rolled back, decided means committed. */
const EXPECT: Record<TwoPhasePoint, "both" | "neither"> = {
  "before-prepare": "neither",
  "some-prepared": "neither",
  "all-prepared": "neither",
  "after-decision": "both",
  "some-committed": "both",
};

// The probe moves money between k1 (us-east) and k2 (ap-south): the home region, eu-west, holds
// the table log and is no participant, so holding the log never holds a participant.
const FIRST = 1;
const SECOND = 2;
const HOME = 0;
const LOG_TABLE = DECISION_TABLE;

interface Backend {
  readonly pid: number;
  readonly xid: string;
}

/** The backend of a region that ran the probe's INSERT (its text holds the transfer's id). */
async function backendOf(client: pg.Client, id: string): Promise<Backend> {
  const result = await client.query<{ pid: number; xid: string | null }>(
    "SELECT pid, backend_xid::text AS xid FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
    [id],
  );
  const row = result.rows[0];
  if (row === undefined || row.xid === null) throw new Error(`no backend holds transfer ${id}`);
  return { pid: row.pid, xid: row.xid };
}

async function preparedGid(client: pg.Client, xid: string): Promise<string | null> {
  const result = await client.query<{ gid: string }>(
    "SELECT gid FROM pg_prepared_xacts WHERE transaction::text = $1",
    [xid],
  );
  return result.rows[0]?.gid ?? null;
}

async function waitFor<T>(what: () => Promise<T | null>, timeoutMs: number): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (value !== null || Date.now() > deadline) return value;
    await sleep(5);
  }
}

/** What a probe left, for scenarios that time what follows the kill. */
export interface ProbeTrace {
  /** The transaction id, once the first region showed it prepared. */
  gid?: string;
  /** When the proxy was SIGKILLed at the point. */
  killedAt?: number;
  /** When the proxy started again accepted connections. */
  readyAt?: number;
}

/**
 * One probe: a transfer between k1 and k2 whose commit is stopped at `point`, the proxy killed
 * with SIGKILL there, and started again. Returns what it reached, for the report; the transfer is
 * added to the workload with the ending its point requires, and graded with the others.
 */
export async function killAtPoint(
  ctx: DrillContext,
  point: TwoPhasePoint,
  trace: ProbeTrace = {},
): Promise<string> {
  const transfer: Transfer = {
    id: randomUUID(),
    from: "k1",
    to: "k2",
    amount: 1,
    outcome: "failed",
    expect: EXPECT[point],
  };
  const reached = await probe(ctx, point, transfer, trace);
  // Only a point reached says how the transfer must end; otherwise it is graded as any other.
  if (reached !== "reached") delete transfer.expect;
  return reached;
}

async function probe(
  ctx: DrillContext,
  point: TwoPhasePoint,
  transfer: Transfer,
  trace: ProbeTrace,
): Promise<string> {
  const kill = async (): Promise<void> => {
    trace.killedAt ??= Date.now();
    await ctx.proxy.kill();
  };
  let client: pg.Client;
  try {
    client = await connectApp(ctx.proxyPort, 20_000);
  } catch {
    return "no connection";
  }
  ctx.state.transfers.push(transfer);
  if (!(await transferBody(client, transfer, ctx.state))) {
    await client.end().catch(() => undefined);
    return "statements failed";
  }
  const first = await ctx.direct(FIRST);
  const second = await ctx.direct(SECOND);
  const home = await ctx.direct(HOME);
  const thaws: (() => void)[] = [];
  let locked = false;
  try {
    const a = await backendOf(first, transfer.id);
    const b = await backendOf(second, transfer.id);
    if (point === "before-prepare") {
      await kill();
      return "reached";
    }
    if (point === "some-prepared") {
      thaws.push(freezeBackend(b.pid).thaw);
    } else {
      await home.query("BEGIN");
      await home.query(`LOCK TABLE ${LOG_TABLE} IN SHARE ROW EXCLUSIVE MODE`);
      locked = true;
    }
    const commit = commitTransfer(client, transfer);
    const gid = await waitFor(() => preparedGid(first, a.xid), 1200);
    if (gid === null) return `not reached: no PREPARE in us-east (${transfer.error ?? "no error"})`;
    trace.gid = gid;
    if (point === "some-prepared") {
      await kill();
      return (await preparedGid(second, b.xid)) === null ? "reached" : "not reached: both prepared";
    }
    if ((await waitFor(() => preparedGid(second, b.xid), 1200)) === null)
      return "not reached: no PREPARE in ap-south";
    if (point === "all-prepared") {
      await kill();
      // The dead proxy's decision INSERT still waits for the lock: end it, so no decision is written.
      await home.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE relation = '${LOG_TABLE}'::regclass AND NOT granted`,
      );
      const decided = await home.query(`SELECT 1 FROM ${LOG_TABLE} WHERE gid = $1`, [gid]);
      return decided.rowCount === 0 ? "reached" : "not reached: decided";
    }
    thaws.push(freezeBackend(b.pid).thaw);
    if (point === "after-decision") thaws.push(freezeBackend(a.pid).thaw);
    await home.query("ROLLBACK");
    locked = false;
    const decided = await waitFor(async () => {
      const row = await home.query<{ decision: string }>(`SELECT decision FROM ${LOG_TABLE} WHERE gid = $1`, [
        gid,
      ]);
      return row.rows[0]?.decision ?? null;
    }, 2000);
    if (decided !== "commit") return `not reached: decision ${decided ?? "not written"}`;
    if (point === "some-committed") {
      const committed = await waitFor(
        async () => ((await preparedGid(first, a.xid)) === null ? true : null),
        2000,
      );
      await kill();
      if (committed === null) return "not reached: no COMMIT PREPARED in us-east";
    } else {
      await kill();
    }
    const stillPrepared = (await preparedGid(second, b.xid)) !== null;
    await commit;
    return stillPrepared ? "reached" : "not reached: ap-south committed";
  } catch (error) {
    return `probe failed: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    if (locked) await home.query("ROLLBACK").catch(() => undefined);
    for (const thaw of thaws) thaw();
    await ctx.proxy.kill();
    await client.end().catch(() => undefined);
    await Promise.all([first.end(), second.end(), home.end()].map((p) => p.catch(() => undefined)));
    await ctx.proxy.start();
    trace.readyAt = Date.now();
  }
}
