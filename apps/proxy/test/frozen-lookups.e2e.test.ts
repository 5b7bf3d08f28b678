import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerFreezer } from "./support/frozen-server.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * The round trips the proxy makes on a client's behalf, not the client's statement itself: the
 * catalog lookup of an INSERT without a column list, the reads taken out of a write, a Describe of
 * a statement prepared on the region. us-east (bob) is frozen by SIGSTOP; each must fail within
 * `[pool] unreachable_timeout_ms` (plus the guard's checks) naming the region, and the session go on
 * with other regions.
 */

const UNREACHABLE_MS = 2_000;
/** The deadline, up to two checks to notice the wait, slack for a loaded 2-core machine. */
const BOUND_MS = UNREACHABLE_MS + 2_500;
const US_EAST = 1;

let regions: RealRegions;
const freezer = new ServerFreezer();

beforeAll(async () => {
  regions = await startRealRegions(`\n[pool]\nunreachable_timeout_ms = ${UNREACHABLE_MS}\n`);
}, 120_000);

afterAll(async () => {
  freezer.resume();
  await regions?.close();
});

async function client(): Promise<pg.Client> {
  const c = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

interface Outcome {
  readonly ms: number;
  readonly error: (Error & { code?: string }) | undefined;
  readonly rows: unknown[][];
}

async function timed(run: () => Promise<unknown[][]>): Promise<Outcome> {
  const started = Date.now();
  try {
    const rows = await run();
    return { ms: Date.now() - started, error: undefined, rows };
  } catch (error) {
    return { ms: Date.now() - started, error: error as Outcome["error"], rows: [] };
  }
}

function query(c: pg.Client, sql: string): Promise<unknown[][]> {
  return c.query({ text: sql, rowMode: "array" }).then((result) => result.rows as unknown[][]);
}

/** Resumes us-east and waits until a keyed read of bob is served again. */
async function thaw(): Promise<void> {
  freezer.resume();
  const started = Date.now();
  for (;;) {
    const c = await client();
    const outcome = await timed(() => query(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1"));
    await c.end().catch(() => undefined);
    if (outcome.error === undefined) return;
    if (Date.now() - started > 20_000) throw new Error(`us-east still failing: ${outcome.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function expectFailedNamingUsEast(outcome: Outcome, what: string): void {
  console.log(
    `SIGSTOP: ${what} failed after ${outcome.ms} ms (${outcome.error?.code} ${outcome.error?.message})`,
  );
  expect(outcome.error?.code).toMatch(/^08/);
  expect(outcome.error?.message).toContain("us-east");
  expect(outcome.ms).toBeLessThan(BOUND_MS);
}

describe("the proxy's own round trips to a frozen region", () => {
  it("ends the column lookup of an INSERT without a column list; the session goes on elsewhere", async () => {
    const c = await client();
    try {
      await query(c, "BEGIN");
      // The block's first region is us-east: the lookup asks there.
      expect(await query(c, "SELECT name FROM users WHERE tenant_id = 'bob' AND id = 1")).toEqual([
        ["bob-1"],
      ]);
      await freezer.freeze(regions.cluster.servers[US_EAST]!.dataDir);
      const insert = await timed(() =>
        query(
          c,
          "INSERT INTO users VALUES ('bob', 90, 'b', 'US', 30, now()), ('alice', 90, 'a', 'FR', 30, now())",
        ),
      );
      expectFailedNamingUsEast(insert, "the column lookup of an INSERT");
      await query(c, "ROLLBACK").catch(() => undefined);
      expect(await query(c, "SELECT name FROM users WHERE tenant_id = 'alice' AND id = 1")).toEqual([
        ["alice-1"],
      ]);
    } finally {
      await thaw();
      await c.end().catch(() => undefined);
    }
    expect(
      (await regions.direct["eu-west"].query("SELECT count(*)::int AS n FROM users WHERE id = 90")).rows,
    ).toEqual([{ n: 0 }]);
  }, 60_000);

  it("ends the read taken out of a write when it includes the frozen region", async () => {
    const c = await client();
    try {
      await freezer.freeze(regions.cluster.servers[US_EAST]!.dataDir);
      const update = await timed(() =>
        query(
          c,
          "UPDATE users SET age = age + 1 WHERE tenant_id = 'alice' AND id = 1 AND age <= (SELECT max(age) FROM users)",
        ),
      );
      expectFailedNamingUsEast(update, "the read of a write across regions");
      expect(await query(c, "SELECT name FROM users WHERE tenant_id = 'chandra' AND id = 1")).toEqual([
        ["chandra-1"],
      ]);
    } finally {
      await thaw();
      await c.end().catch(() => undefined);
    }
  }, 60_000);

  it("ends a Describe of a statement prepared on the frozen region; other regions describe and run", async () => {
    const sql = postgres({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
      max: 1,
      onnotice: () => undefined,
    });
    try {
      await freezer.freeze(regions.cluster.servers[US_EAST]!.dataDir);
      // postgres.js sends Parse, Describe and Sync first; the key literal sends the Describe to us-east.
      const described = await timed(async () =>
        (
          await sql.unsafe("SELECT name FROM users WHERE tenant_id = 'bob' AND id = $1", [1], {
            prepare: true,
          })
        ).map((row) => Object.values(row)),
      );
      expectFailedNamingUsEast(described, "a Describe sent to the region");
      const other = await sql.unsafe("SELECT name FROM users WHERE tenant_id = 'alice' AND id = $1", [2], {
        prepare: true,
      });
      expect(other.map((row) => row.name)).toEqual(["alice-2"]);
    } finally {
      await thaw();
      await sql.end({ timeout: 1 });
    }
  }, 60_000);
});
