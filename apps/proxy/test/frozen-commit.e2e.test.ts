import { readFile } from "node:fs/promises";
import { MemoryDirectory, parseConfig } from "@geo/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { regionsToml } from "./support/fake-regions.js";
import { ServerFreezer } from "./support/frozen-server.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { txnSection } from "./support/txn-data-dir.js";

/**
 * Two-phase commit across regions with one region frozen by SIGSTOP (postmaster and every backend):
 * its port stays open and nothing answers. The unreachable guard is put out of reach, so only the
 * commit's own deadlines (`[txn] decide_deadline_ms` for PREPARE, `step_timeout_ms` for the rest)
 * can end the wait. bob lives in us-east (the frozen one), alice in eu-west (home), chandra in ap-south.
 */

const DECIDE_DEADLINE_MS = 3_000;
const STEP_TIMEOUT_MS = 1_500;
/** Far above every deadline: a COMMIT still unanswered by then hangs. */
const HUNG_AFTER_MS = 30_000;
const EU_WEST = 0;
const US_EAST = 1;

let regions: RealRegions;
const freezer = new ServerFreezer();

beforeAll(async () => {
  regions = await startRealRegions(
    `\n[pool]\nunreachable_timeout_ms = 600000\n${txnSection(
      `decide_deadline_ms = ${DECIDE_DEADLINE_MS}\nstep_timeout_ms = ${STEP_TIMEOUT_MS}\nrecovery_grace_ms = 60000\nrecovery_interval_ms = 600000\n`,
    )}`,
  );
  // A deferred trigger runs at PREPARE: a row named 'hold' makes eu-west's PREPARE wait for an
  // advisory lock the test holds, so us-east can be frozen after it prepared and before the decision.
  await regions.direct["eu-west"].query(`
CREATE FUNCTION hold_at_prepare() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.name = 'hold' THEN PERFORM pg_advisory_xact_lock_shared(4242); END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER hold_at_prepare AFTER INSERT ON users DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION hold_at_prepare();`);
}, 120_000);

afterAll(async () => {
  freezer.resume();
  await regions?.close();
});

async function client(proxy: RunningProxy = regions.proxy): Promise<pg.Client> {
  const c = new pg.Client({
    host: "127.0.0.1",
    port: proxy.port,
    user: "postgres",
    database: "postgres",
  });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

type Answer =
  | { readonly ok: true }
  | { readonly ok: false; readonly code?: string; readonly message: string };

/** The statement's answer, or "hung" when none came within HUNG_AFTER_MS. */
async function answer(pending: Promise<unknown>): Promise<Answer | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), HUNG_AFTER_MS);
  });
  const settled = pending.then(
    (): Answer => ({ ok: true }),
    (error: { code?: string; message: string }): Answer => ({
      ok: false,
      message: error.message,
      ...(error.code === undefined ? {} : { code: error.code }),
    }),
  );
  try {
    return await Promise.race([settled, hung]);
  } finally {
    clearTimeout(timer);
  }
}

async function freezeUsEast(): Promise<void> {
  await freezer.freeze(regions.cluster.servers[US_EAST]!.dataDir);
}

/** The us-east backend serving the transaction's leg: the one other than ours in `state`. */
async function legBackend(state: string, query = "%"): Promise<number> {
  const { rows } = await regions.direct["us-east"].query(
    "SELECT pid FROM pg_stat_activity WHERE state = $1 AND query LIKE $2 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    [state, query],
  );
  expect(rows).toHaveLength(1);
  return rows[0].pid as number;
}

/** Waits until backend `pid` sleeps in epoll_wait, where a backend waits for its client's next message. */
async function waitingForCommand(pid: number): Promise<void> {
  for (let tries = 0; ; tries++) {
    const wchan = await readFile(`/proc/${pid}/wchan`, "utf8").catch(() => "");
    if (wchan.trim() === "do_epoll_wait") return;
    if (tries > 1000) throw new Error(`backend ${pid} never waited for its next command (wchan ${wchan})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * After SIGCONT, waits until the leg's backend, whose connection the proxy closed unanswered, has
 * run what its socket still held (a PREPARE or COMMIT PREPARED sent before the proxy gave up lands
 * now) and exited, so what recovery then finds is final.
 */
async function backendGone(pid: number): Promise<void> {
  for (let tries = 0; ; tries++) {
    const { rows } = await regions.direct["us-east"].query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1",
      [pid],
    );
    if (rows[0].n === 0) return;
    if (tries > 400) throw new Error(`backend ${pid} still running after SIGCONT`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function preparedEverywhere(): Promise<string[]> {
  const gids: string[] = [];
  for (const direct of Object.values(regions.direct)) {
    const { rows } = await direct.query("SELECT gid FROM pg_prepared_xacts");
    gids.push(...rows.map((row) => row.gid as string));
  }
  return gids;
}

async function namesOf(id: number): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  for (const [region, direct] of Object.entries(regions.direct)) {
    const { rows } = await direct.query("SELECT name FROM users WHERE id = $1 ORDER BY tenant_id", [id]);
    found[region] = rows.map((row) => row.name as string);
  }
  return found;
}

/** Other regions serve a read and a write during the freeze. */
async function othersServe(): Promise<void> {
  const other = await client();
  try {
    const read = await other.query("SELECT name FROM users WHERE tenant_id = 'chandra' AND id = 1");
    expect(read.rows).toEqual([{ name: "chandra-1" }]);
    await other.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 950, 'during-freeze')");
    const written = await other.query("SELECT name FROM users WHERE tenant_id = 'alice' AND id = 950");
    expect(written.rows).toEqual([{ name: "during-freeze" }]);
    await other.query("DELETE FROM users WHERE tenant_id = 'alice' AND id = 950");
  } finally {
    await other.end();
  }
}

describe("a cross-region commit with a region frozen by SIGSTOP", () => {
  it("rolls back everywhere, naming the region, when it freezes before PREPARE; nothing stays prepared", async () => {
    const c = await client();
    let leg = 0;
    try {
      await c.query("BEGIN");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 900, 'a-900')");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 900, 'b-900')");
      leg = await legBackend("idle in transaction");
      await freezeUsEast();
      const started = Date.now();
      const commit = await answer(c.query("COMMIT"));
      console.log(`frozen before PREPARE: COMMIT answered after ${Date.now() - started} ms`);
      expect(commit).not.toBe("hung");
      expect(commit).toMatchObject({ ok: false, code: "40001" });
      const { message } = commit as { message: string };
      expect(message).toContain("us-east");
      expect(message).toContain("decide_deadline_ms");
      // The session is usable at once for other regions, and so are other clients.
      expect((await c.query("SELECT name FROM users WHERE tenant_id = 'alice' AND id = 1")).rows).toEqual([
        { name: "alice-1" },
      ]);
      await othersServe();
    } finally {
      freezer.resume();
    }
    await backendGone(leg);
    // The PREPARE the frozen server read on waking is rolled back by recovery, from the logged abort.
    await regions.proxy.runtime.txn.recoverNow();
    expect(await preparedEverywhere()).toEqual([]);
    expect(await namesOf(900)).toEqual({ "eu-west": [], "us-east": [], "ap-south": [] });
    await c.end();
  }, 90_000);

  it("answers COMMIT when it freezes after the decision, and recovery commits there once it answers", async () => {
    const eu = regions.direct["eu-west"];
    const us = regions.direct["us-east"];
    await eu.query("SELECT pg_advisory_lock(4242)");
    const c = await client();
    let locked = true;
    let leg = 0;
    try {
      await c.query("BEGIN");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 901, 'b-901')");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('alice', 901, 'hold')");
      const pending = c.query("COMMIT");
      // us-east has prepared and answered (its backend went idle after PREPARE); eu-west waits on the lock.
      for (let tries = 0; ; tries++) {
        const { rows } = await us.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'PREPARE TRANSACTION%' AND state = 'idle'",
        );
        if (rows[0].n > 0) break;
        if (tries > 400) throw new Error("us-east never prepared");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const { rows: preparedThere } = await us.query("SELECT gid FROM pg_prepared_xacts");
      expect(preparedThere).toHaveLength(1);
      const gid = preparedThere[0].gid as string;
      leg = await legBackend("idle", "PREPARE TRANSACTION%");
      // The idle state is reported just before the answer is flushed: freeze only once the
      // backend waits for its next command, so the answer has left the server.
      await waitingForCommand(leg);
      await freezeUsEast();
      const started = Date.now();
      await eu.query("SELECT pg_advisory_unlock(4242)");
      locked = false;
      const commit = await answer(pending);
      console.log(`frozen after the decision: COMMIT answered after ${Date.now() - started} ms`);
      expect(commit).toEqual({ ok: true });
      // Committed in eu-west; us-east owes its COMMIT PREPARED, and the console says so.
      expect((await eu.query("SELECT name FROM users WHERE id = 901")).rows).toEqual([{ name: "hold" }]);
      const inDoubt = await c.query("SHOW IN DOUBT");
      expect(JSON.stringify(inDoubt.rows)).toContain(gid);
      expect(JSON.stringify(inDoubt.rows)).toContain("us-east");
      await othersServe();
    } finally {
      freezer.resume();
      if (locked) await eu.query("SELECT pg_advisory_unlock(4242)");
    }
    await backendGone(leg);
    await regions.proxy.runtime.txn.recoverNow();
    expect(await preparedEverywhere()).toEqual([]);
    expect(await namesOf(901)).toEqual({ "eu-west": ["hold"], "us-east": ["b-901"], "ap-south": [] });
    expect((await c.query("SHOW IN DOUBT")).rows).toEqual([]);
    await c.end();
  }, 90_000);
});

describe("a cross-region commit whose decision log table lives in a frozen home region", () => {
  let proxy: RunningProxy;

  beforeAll(async () => {
    // Its own node name (so its own gid prefix) and the table log in eu-west, the home region.
    const toml = regionsToml(
      regions.cluster.servers.map((server) => server.port),
      `
[pool]
unreachable_timeout_ms = 600000

[txn]
decision_log = "table"
log_table = "geo_txn_decisions_frozen"
decide_deadline_ms = ${DECIDE_DEADLINE_MS}
step_timeout_ms = ${STEP_TIMEOUT_MS}
recovery_grace_ms = 4000
recovery_interval_ms = 600000
`,
    ).replace(
      '[server]\nhost = "127.0.0.1"\nport = 0\n',
      '[server]\nhost = "127.0.0.1"\nport = 0\nnode = "frozenlog"\n',
    );
    proxy = await startProxy({
      config: parseConfig(toml, "table-log.toml"),
      directory: new MemoryDirectory(regions.entries),
      logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
      port: 0,
      shutdownTimeoutMs: 500,
    });
  });

  afterAll(async () => {
    freezer.resume();
    await proxy?.close({ timeoutMs: 200 });
  });

  it("ends with 08007 naming the region when the decision write goes unanswered, and settles all or none after", async () => {
    const c = await client(proxy);
    // A pass now leaves an idle eu-west connection in the pool, the one the decision write takes.
    await proxy.runtime.txn.recoverNow();
    try {
      await c.query("BEGIN");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('bob', 902, 'b-902')");
      await c.query("INSERT INTO users (tenant_id, id, name) VALUES ('chandra', 902, 'c-902')");
      await freezer.freeze(regions.cluster.servers[EU_WEST]!.dataDir);
      const started = Date.now();
      const commit = await answer(c.query("COMMIT"));
      console.log(`decision log frozen: COMMIT answered after ${Date.now() - started} ms`);
      expect(commit).not.toBe("hung");
      expect(commit).toMatchObject({ ok: false, code: "08007" });
      const { message } = commit as { message: string };
      expect(message).toContain("eu-west");
      expect(message).toContain("step_timeout_ms");
    } finally {
      freezer.resume();
    }
    // The decision write may land when eu-west wakes (its backend reads what its socket held);
    // either way recovery ends it the one way the table says, everywhere.
    for (let tries = 0; (await preparedEverywhere()).length > 0; tries++) {
      if (tries > 60) throw new Error("recovery left the transaction prepared");
      await proxy.runtime.txn.recoverNow();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Committed in both written regions (the write landed and recovery read it back) or in neither.
    const names = await namesOf(902);
    console.log(`decision log frozen: settled as ${JSON.stringify(names)}`);
    expect([
      { "eu-west": [], "us-east": ["b-902"], "ap-south": ["c-902"] },
      { "eu-west": [], "us-east": [], "ap-south": [] },
    ]).toContainEqual(names);
    await c.end();
  }, 90_000);
});
