import pg from "pg";
import { KEYS, OPS_USER, REGIONS } from "./bank.js";
import { freezeServer } from "./freeze.js";
import { sleep } from "./proxy-process.js";
import { type DrillContext, type Scenario, SHARED_DIRECTORY } from "./run-drill.js";
import { connectApp, keyedLoop, type WorkloadState } from "./workloads.js";

/**
 * Scenarios with two proxies sharing the directory (`setup.proxies = 2`): A is homed in eu-west,
 * the authority, and B in us-east. Keyed clients of k0, k2, ... go through A, of k1, k3, ...
 * through B; the transfer clients take them in turn too.
 */

const EU = 0;
const A = 0;
const B = 1;

/** The key A moves round the regions: it starts in us-east and its keyed client goes through B. */
const MOVING = "k1";
/** Clients incrementing it through B besides its keyed client. */
const EXTRA_WRITERS = 3;
/** What a statement held by a move, or a move refused, may answer: both say retry (docs/directory.md). */
const RETRYABLE = new Set(["40001", "55P03"]);
/** The geo-partitioned tables and the column holding the key. */
const GEO_TABLES = ["counters", "increments", "accounts", "transfers"] as const;

/** The SQLSTATE at the head of a workload's recorded error (`describeError`), or what it said instead. */
function sqlstate(error: string | undefined): string {
  const text = (error ?? "").replace(/^at COMMIT: /, "");
  return /^[0-9A-Z]{5}\b/.exec(text)?.[0] ?? `no code (${text.slice(0, 60)})`;
}

function tally(codes: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const code of codes) out.set(code, (out.get(code) ?? 0) + 1);
  return out;
}

function listed(counts: Map<string, number>): string {
  return counts.size === 0
    ? "none"
    : [...counts]
        .sort(([, a], [, b]) => b - a)
        .map(([code, n]) => `${code} x${n}`)
        .join(", ");
}

/** Committed, unknown and failed (by SQLSTATE) of both workloads, for the report. */
function outcomesNote(state: WorkloadState): string {
  return (["increments", "transfers"] as const)
    .map((name) => {
      const writes = state[name];
      const committed = writes.filter((w) => w.outcome === "committed").length;
      const unknown = writes.filter((w) => w.outcome === "unknown").length;
      const failed = writes.filter((w) => w.outcome === "failed");
      return `${name === "increments" ? "keyed" : "transfers"} ${committed} committed, ${unknown} unknown, ${failed.length} failed (${listed(tally(failed.map((w) => sqlstate(w.error))))})`;
    })
    .join("; ");
}

async function operator(port: number): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: OPS_USER.name,
    password: OPS_USER.password,
    database: "postgres",
  });
  client.on("error", () => undefined);
  client.on("notice", () => undefined);
  await client.connect();
  return client;
}

/** Where each geo-partitioned table holds rows of `key`, and each region's directory entry for it, read directly. */
async function placement(
  ctx: DrillContext,
  key: string,
): Promise<{ rows: Map<string, string[]>; entries: (string | null)[][]; counter: number; recorded: number }> {
  const rows = new Map<string, string[]>(GEO_TABLES.map((table) => [table, []]));
  const entries: (string | null)[][] = [];
  let counter = 0;
  let recorded = 0;
  for (const [i, region] of REGIONS.entries()) {
    const client = await ctx.direct(i);
    try {
      for (const table of GEO_TABLES) {
        const found = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`,
          [key],
        );
        if (found.rows[0]!.n > 0) rows.get(table)!.push(region);
        if (table === "increments") recorded += found.rows[0]!.n;
      }
      const n = await client.query<{ n: string }>("SELECT n FROM counters WHERE tenant_id = $1", [key]);
      for (const row of n.rows) counter += Number(row.n);
      const entry = await client.query<{ region: string }>(
        "SELECT region FROM geoproxy_directory WHERE key = $1",
        [key],
      );
      entries.push(entry.rows.map((row) => row.region));
    } finally {
      await client.end();
    }
  }
  return { rows, entries: entries.map((names) => (names.length === 0 ? [null] : names)), counter, recorded };
}

/**
 * A RELOCATEs `MOVING` to another region every 300 to 500 ms until a second before the end;
 * notes the moves done and the refusals by SQLSTATE, and fails on any refusal but 55P03/40001.
 */
async function moveAround(ctx: DrillContext): Promise<void> {
  let where = REGIONS.indexOf(KEYS.find((k) => k.key === MOVING)!.region);
  const done = new Map<string, number>();
  const refused = new Map<string, number>();
  let ops: pg.Client | null = null;
  let took = 0;
  await ctx.at(0.05);
  while (Date.now() < ctx.deadline - 1000) {
    await sleep(300 + ctx.random() * 200);
    const to = (where + 1 + Math.floor(ctx.random() * 2)) % REGIONS.length;
    const sent = Date.now();
    try {
      ops ??= await operator(ctx.proxyPorts[A]!);
      const result = await ops.query<{ state: string }>(`RELOCATE ${MOVING} TO '${REGIONS[to]}'`);
      took += Date.now() - sent;
      const state = result.rows.map((row) => row.state).find((s) => s !== "moved") ?? "moved";
      done.set(state, (done.get(state) ?? 0) + 1);
      ctx.progress(
        `RELOCATE ${MOVING} ${REGIONS[where]} -> ${REGIONS[to]}: ${state} in ${Date.now() - sent} ms`,
      );
      where = to;
    } catch (error) {
      const code = (error as { code?: string }).code ?? `no code (${(error as Error).message})`;
      refused.set(code, (refused.get(code) ?? 0) + 1);
      ctx.progress(`RELOCATE ${MOVING} ${REGIONS[where]} -> ${REGIONS[to]}: refused ${code}`);
      if (!RETRYABLE.has(code)) ctx.fail(`RELOCATE ${MOVING} TO '${REGIONS[to]}' refused ${code}`);
      if ((error as { code?: string }).code === undefined) {
        await ops?.end().catch(() => undefined);
        ops = null;
      }
    }
  }
  await ops?.end().catch(() => undefined);
  const moves = [...done.values()].reduce((a, b) => a + b, 0);
  ctx.note(
    `moves of ${MOVING} through drill-a: ${moves} done (${listed(done)}), mean ${moves === 0 ? 0 : Math.round(took / moves)} ms each; refused: ${listed(refused)}`,
  );
  if (moves === 0) ctx.fail(`no move of ${MOVING} was done`);
}

/**
 * After the run, graded exactly: the increments of `MOVING` told committed, its counter and its
 * recorded increments are one number (an increment of unknown outcome may be in it or not); its
 * rows are in one region, which every region's directory names and both proxies read from;
 * refusals other than 40001 and 55P03 fail the drill.
 */
async function verifyMovingKey(ctx: DrillContext, moving = MOVING): Promise<void> {
  const MOVING = moving;
  const mine = ctx.state.increments.filter((increment) => increment.key === MOVING);
  const committed = mine.filter((increment) => increment.outcome === "committed").length;
  const unknown = mine.filter((increment) => increment.outcome === "unknown").length;
  const refusals = tally(
    mine.filter((increment) => increment.outcome !== "committed").map((i) => sqlstate(i.error)),
  );
  const { rows, entries, counter, recorded } = await placement(ctx, MOVING);
  const holders = rows.get("counters")!;
  const holder = holders.length === 1 ? holders[0]! : null;
  ctx.note(
    `${MOVING} (${EXTRA_WRITERS + 1} clients): ${committed} increments committed, counter ${counter}, ${recorded} increments recorded, ${unknown} unknown; refused: ${listed(refusals)}; rows in ${holders.join(", ") || "no region"}`,
  );
  ctx.note(`workloads through both proxies: ${outcomesNote(ctx.state)}`);
  if (counter !== recorded)
    ctx.fail(`${MOVING}'s counter is ${counter} with ${recorded} increments recorded`);
  if (unknown === 0 ? committed !== counter : committed > counter || counter > committed + unknown)
    ctx.fail(`${MOVING}: ${committed} increments committed, ${unknown} unknown, counter ${counter}`);
  for (const [code, n] of refusals)
    if (!RETRYABLE.has(code)) ctx.fail(`${n} increments of ${MOVING} refused ${code}`);
  if (ctx.state.misrouted > 0) ctx.fail(`${ctx.state.misrouted} UPDATEs found no row where they were sent`);
  if (holder === null) ctx.fail(`${MOVING}'s counter is in ${holders.length} regions`);
  for (const [table, where] of rows)
    if (where.length > 0 && (where.length !== 1 || where[0] !== holder))
      ctx.fail(`${MOVING}'s ${table} rows are in ${where.join(", ")}; its counter in ${holder ?? "none"}`);
  for (const [i, names] of entries.entries())
    if (names.length !== 1 || names[0] !== holder)
      ctx.fail(
        `${REGIONS[i]}'s directory has ${MOVING} in ${names.join(", ") || "no entry"}; its rows are in ${holder}`,
      );
  for (const [i, port] of ctx.proxyPorts.entries()) {
    const client = await connectApp(port, 5000);
    try {
      const read = await client.query<{ n: string }>("SELECT n FROM counters WHERE tenant_id = $1", [MOVING]);
      if (read.rows.length !== 1 || Number(read.rows[0]!.n) !== counter)
        ctx.fail(`drill-${"ab"[i]} reads ${MOVING}'s counter as ${read.rows.map((r) => r.n).join(", ")}`);
    } finally {
      await client.end();
    }
  }
}

/** What one probe through a proxy got, and when. */
interface Probe {
  readonly at: number;
  /** `ok`, or the SQLSTATE (or message) it was refused with. */
  readonly answer: string;
}

/**
 * Reads a counter in ap-south (which stays up) through `port` every 100 ms until `stop()` is true;
 * each probe has 2 s to answer.
 */
async function probeLoop(port: number, stop: () => boolean, probes: Probe[]): Promise<void> {
  let client: pg.Client | null = null;
  while (!stop()) {
    try {
      client ??= await connectApp(port, 2000);
      await client.query("SELECT n FROM counters WHERE tenant_id = 'k2'");
      probes.push({ at: Date.now(), answer: "ok" });
    } catch (error) {
      const code = (error as { code?: string }).code;
      probes.push({ at: Date.now(), answer: code ?? `no code (${(error as Error).message})` });
      if (code === undefined) {
        await client?.end().catch(() => undefined);
        client = null;
      }
    }
    await sleep(100);
  }
  await client?.end().catch(() => undefined);
}

/**
 * eu-west (the authority, and a region of k0, k3, k6) frozen with SIGSTOP for a few seconds, then
 * woken. Each proxy is probed every 100 ms with a read of a key in ap-south: once a lease and two
 * polls have passed since the freeze, every probe through either proxy must be refused with 57P03
 * until the repair; after it, both must answer again (the time is noted).
 */
async function authorityDown(ctx: DrillContext): Promise<void> {
  await ctx.at(0.25);
  const probes = ctx.proxyPorts.map((): Probe[] => []);
  let repairedAt: number | null = null;
  const stop = (): boolean =>
    Date.now() > ctx.deadline + 5000 ||
    (repairedAt !== null &&
      probes.every((list) => list.some((p) => p.at > repairedAt! && p.answer === "ok")));
  const probing = ctx.proxyPorts.map((port, i) => probeLoop(port, stop, probes[i]!));
  const holdMs = Math.max(3000, Math.min(8000, 0.25 * (ctx.deadline - ctx.startedAt)));
  ctx.progress(`freezing eu-west (the authority) for ${(holdMs / 1000).toFixed(1)} s`);
  const frozenAt = Date.now();
  const frozen = freezeServer(ctx.cluster.servers[EU]!.dataDir);
  try {
    await sleep(holdMs);
  } finally {
    frozen.thaw();
  }
  repairedAt = Date.now();
  ctx.progress("eu-west woken");
  await Promise.all(probing);
  // By then every visit sent before the freeze is older than a lease: no proxy may route.
  const lapsedBy = frozenAt + SHARED_DIRECTORY.leaseMs + 2 * SHARED_DIRECTORY.pollMs + 200;
  for (const [i, list] of probes.entries()) {
    const name = `drill-${"ab"[i]}`;
    const firstRefusal = list.find((p) => p.at > frozenAt && p.answer === "57P03");
    const during = list.filter((p) => p.at > lapsedBy && p.at < repairedAt!);
    const back = list.find((p) => p.at > repairedAt! && p.answer === "ok");
    ctx.note(
      `${name}: first 57P03 ${firstRefusal === undefined ? "never" : `${firstRefusal.at - frozenAt} ms after the freeze`}; while out: ${listed(tally(during.map((p) => p.answer)))}; routing again ${back === undefined ? "never" : `${back.at - repairedAt} ms after the repair`}`,
    );
    if (during.length === 0) ctx.fail(`${name}: no probe answered while eu-west was out`);
    for (const [answer, n] of tally(during.map((p) => p.answer)))
      if (answer !== "57P03") ctx.fail(`${name}: ${n} probes answered ${answer} past its lease`);
    if (back === undefined) ctx.fail(`${name}: no probe answered after eu-west was woken`);
  }
}

/** The region whose server the majority drill stops, and its keys. */
const AP = 2;
const AP_KEYS = new Set(KEYS.filter((k) => k.region === REGIONS[AP]).map((k) => k.key));
/** The key A moves between eu-west and us-east while ap-south is down (its keyed client goes through A). */
const MOVED_IN_OUTAGE = "k0";

/**
 * The proxies agree in a majority of the regions. ap-south's PostgreSQL is stopped for a third of
 * the run and started again. Meanwhile A RELOCATEs k0 between eu-west and us-east, and each new
 * key is written through both proxies at once (exactly one INSERT may succeed, the other must
 * meet it: 23505). Graded: no write to a key outside ap-south fails but with the retryable 40001
 * and 55P03 of k0's moves; every move and claim succeeds; once ap-south is back, every region's
 * directory names k0's region and both proxies read its counter.
 */
async function majorityOutage(ctx: DrillContext): Promise<void> {
  const ops = await operator(ctx.proxyPorts[A]!);
  const apps = await Promise.all(ctx.proxyPorts.map((port) => connectApp(port, 5000)));
  const extra = Array.from({ length: EXTRA_WRITERS }, () =>
    keyedLoop(ctx.proxyPorts[B]!, MOVED_IN_OUTAGE, ctx.deadline, ctx.state),
  );
  try {
    await ctx.at(0.2);
    ctx.progress("stopping ap-south (fast shutdown)");
    await ctx.cluster.stopServer(AP, "fast");
    const stoppedAt = Date.now();
    const upAt = ctx.startedAt + 0.6 * (ctx.deadline - ctx.startedAt);
    const moves = new Map<string, number>();
    let claims = 0;
    let where = REGIONS.indexOf(KEYS.find((k) => k.key === MOVED_IN_OUTAGE)!.region);
    while (Date.now() < upAt) {
      await sleep(300 + ctx.random() * 200);
      const to = where === EU ? 1 : EU;
      try {
        await ops.query(`RELOCATE ${MOVED_IN_OUTAGE} TO '${REGIONS[to]}'`);
        moves.set("moved", (moves.get("moved") ?? 0) + 1);
        where = to;
      } catch (error) {
        const code = (error as { code?: string }).code ?? "no code";
        moves.set(code, (moves.get(code) ?? 0) + 1);
        if (!RETRYABLE.has(code))
          ctx.fail(
            `RELOCATE ${MOVED_IN_OUTAGE} TO '${REGIONS[to]}' with ap-south down: ${code} ${(error as Error).message}`,
          );
      }
      const key = `fresh-${claims++}`;
      const both = await Promise.allSettled(
        apps.map((app) => app.query("INSERT INTO counters (tenant_id, n) VALUES ($1, 0)", [key])),
      );
      const won = both.filter((outcome) => outcome.status === "fulfilled").length;
      const met = both.filter(
        (outcome) => outcome.status === "rejected" && (outcome.reason as { code?: string }).code === "23505",
      ).length;
      if (won !== 1 || met !== 1)
        ctx.fail(
          `new key ${key} through both proxies: ${won} INSERTs succeeded, ${met} met the other (${both.map((o) => (o.status === "rejected" ? (o.reason as Error).message : "ok")).join("; ")})`,
        );
    }
    ctx.progress("starting ap-south again");
    await ctx.cluster.startServer(AP);
    ctx.note(
      `ap-south down ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s; RELOCATEs of ${MOVED_IN_OUTAGE} between eu-west and us-east meanwhile: ${listed(moves)}; ${claims} new keys written through both proxies at once, each placed once`,
    );
    // Back, ap-south is caught up by the proxies' visits: its entry for k0 names where k0 is.
    const holder = REGIONS[where]!;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const client = await ctx.direct(AP);
      try {
        const entry = await client.query<{ region: string }>(
          "SELECT region FROM geoproxy_directory WHERE key = $1",
          [MOVED_IN_OUTAGE],
        );
        if (entry.rows[0]?.region === holder) break;
      } finally {
        await client.end();
      }
      if (Date.now() > deadline) {
        ctx.fail(`ap-south's directory does not name ${holder} for ${MOVED_IN_OUTAGE} 15 s after it is back`);
        break;
      }
      await sleep(200);
    }
    for (const [key] of [...Array(claims).keys()].map((i) => [`fresh-${i}`])) {
      const found: string[] = [];
      for (const [i, region] of REGIONS.entries()) {
        const client = await ctx.direct(i);
        try {
          const rows = await client.query("SELECT 1 FROM counters WHERE tenant_id = $1", [key]);
          if (rows.rows.length > 0) found.push(region);
        } finally {
          await client.end();
        }
      }
      if (found.length !== 1) ctx.fail(`new key ${key} has rows in ${found.join(", ") || "no region"}`);
    }
  } finally {
    await Promise.all(extra);
    await ops.end().catch(() => undefined);
    for (const app of apps) await app.end().catch(() => undefined);
  }
}

/** No write of a key outside ap-south may fail but with a retryable refusal of k0's moves. */
async function verifyMajorityOutage(ctx: DrillContext): Promise<void> {
  const outside = ctx.state.increments.filter((increment) => !AP_KEYS.has(increment.key));
  const inside = ctx.state.increments.filter((increment) => AP_KEYS.has(increment.key));
  const transfersOutside = ctx.state.transfers.filter((t) => !AP_KEYS.has(t.from) && !AP_KEYS.has(t.to));
  const bad = [...outside, ...transfersOutside].filter(
    (write) =>
      write.outcome === "unknown" || (write.outcome === "failed" && !RETRYABLE.has(sqlstate(write.error))),
  );
  const committed = (writes: readonly { outcome: string }[]): number =>
    writes.filter((write) => write.outcome === "committed").length;
  ctx.note(
    `writes of keys outside ap-south through both proxies: ${committed(outside)} increments and ${committed(transfersOutside)} transfers committed, ${bad.length} failed (${listed(tally(bad.map((w) => sqlstate(w.error))))}); of ap-south's keys: ${committed(inside)} increments committed, ${inside.filter((w) => w.outcome !== "committed").length} not (its server was down)`,
  );
  for (const write of bad.slice(0, 5))
    ctx.fail(`a write outside ap-south ended ${write.outcome}: ${write.error}`);
  await verifyMovingKey(ctx, MOVED_IN_OUTAGE);
}

export const TWO_PROXY_SCENARIOS: readonly Scenario[] = [
  {
    name: "shared-move",
    summary: `two proxies share the directory: k1 incremented through B by ${EXTRA_WRITERS + 1} clients while A RELOCATEs it round the regions every 300 to 500 ms`,
    setup: { proxies: 2 },
    minSeconds: 5,
    async faults(ctx) {
      await Promise.all([
        ...Array.from({ length: EXTRA_WRITERS }, () =>
          keyedLoop(ctx.proxyPorts[B]!, MOVING, ctx.deadline, ctx.state),
        ),
        moveAround(ctx),
      ]);
    },
    verify: verifyMovingKey,
  },
  {
    name: "shared-authority-down",
    summary:
      "two proxies share the directory; its authority eu-west frozen with SIGSTOP for a few seconds: 57P03 through both, then routing again",
    setup: { proxies: 2 },
    minSeconds: 10,
    faults: authorityDown,
    async verify(ctx) {
      ctx.note(`workloads through both proxies: ${outcomesNote(ctx.state)}`);
    },
  },
  {
    name: "shared-majority-outage",
    summary:
      'two proxies agree in a majority of the regions (authority = "majority"); ap-south\'s PostgreSQL stopped for a third of the run while k0 moves between the other two and new keys are claimed through both',
    setup: { proxies: 2, majority: true },
    minSeconds: 10,
    faults: majorityOutage,
    verify: verifyMajorityOutage,
  },
];
