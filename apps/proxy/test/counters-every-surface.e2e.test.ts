import type { ProxySnapshot } from "@geo/admin";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScrape } from "./admin-prometheus.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/*
 * The counts an operator reads are one count shown four ways: SHOW STATS, /snapshot, /metrics and
 * the dashboard's HTML. Each real statement below (three PostgreSQL servers as regions) must move
 * the same row by the same amount on every one of them.
 */

const FINISHES = ["merged_in_proxy", "finished_in_home", "gathered"] as const;
const OUTCOMES = ["one_phase", "two_phase_committed", "aborted", "in_doubt"] as const;

/** Every read-finish and transaction count, as one surface shows them. */
type Counts = Record<string, number>;

let regions: RealRegions;
let client: pg.Client;
let adminUrl: string;

beforeAll(async () => {
  regions = await startRealRegions("\n[admin]\nport = 0\n");
  const admin = regions.proxy.runtime.observability.admin;
  if (admin === undefined) throw new Error("the [admin] section did not start the admin port");
  adminUrl = admin.url;
  client = new pg.Client({ host: regions.proxy.host, port: regions.proxy.port, user: "postgres" });
  await client.connect();
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await regions?.close();
});

async function fromShowStats(): Promise<Counts> {
  const result = await client.query<{ kind: string; name: string; count: string }>("SHOW STATS");
  const counts: Counts = {};
  for (const row of result.rows) {
    if (row.kind === "read_finish" || row.kind === "transaction") counts[row.name] = Number(row.count);
  }
  return counts;
}

async function fromSnapshot(): Promise<Counts> {
  const snapshot = (await (await fetch(`${adminUrl}/snapshot`)).json()) as ProxySnapshot;
  return { ...snapshot.traffic.multiRegionReads, ...snapshot.transactions.outcomes };
}

async function fromMetrics(): Promise<Counts> {
  const scrape = parseScrape(await (await fetch(`${adminUrl}/metrics`)).text());
  const counts: Counts = {};
  for (const finish of FINISHES)
    counts[finish] = scrape.value("geoproxy_multi_region_reads_total", { finish }) ?? Number.NaN;
  for (const outcome of OUTCOMES)
    counts[outcome] = scrape.value("geoproxy_transactions_total", { outcome }) ?? Number.NaN;
  return counts;
}

/** The dashboard as a browser first receives it: each count sits in a `data-live` element. */
async function fromDashboard(): Promise<Counts> {
  const html = await (await fetch(`${adminUrl}/`)).text();
  const counts: Counts = {};
  for (const [kind, names] of [
    ["read", FINISHES],
    ["transaction", OUTCOMES],
  ] as const) {
    for (const name of names) {
      const match = new RegExp(`data-live="${kind}-${name}">([\\d,]+)<`).exec(html);
      counts[name] = match === null ? Number.NaN : Number(match[1]!.replaceAll(",", ""));
    }
  }
  return counts;
}

const SURFACES = {
  "SHOW STATS": fromShowStats,
  "/snapshot": fromSnapshot,
  "/metrics": fromMetrics,
  dashboard: fromDashboard,
} as const;

/** Runs `work`, then says by how much each count moved on each surface. */
async function movedBy(work: () => Promise<unknown>): Promise<Record<string, Counts>> {
  const before: Record<string, Counts> = {};
  for (const [surface, read] of Object.entries(SURFACES)) before[surface] = await read();
  await work();
  const moved: Record<string, Counts> = {};
  for (const [surface, read] of Object.entries(SURFACES)) {
    const after = await read();
    const delta: Counts = {};
    for (const name of [...FINISHES, ...OUTCOMES]) delta[name] = after[name]! - before[surface]![name]!;
    moved[surface] = delta;
  }
  return moved;
}

function expectEverywhere(moved: Record<string, Counts>, expected: Counts): void {
  const zero = Object.fromEntries([...FINISHES, ...OUTCOMES].map((name) => [name, 0]));
  for (const surface of Object.keys(SURFACES)) {
    expect(moved[surface], surface).toEqual({ ...zero, ...expected });
  }
}

describe("counts shown the same on SHOW STATS, /snapshot, /metrics and the dashboard", () => {
  it("moves merged_in_proxy for an ordered read over every region", async () => {
    const moved = await movedBy(() => client.query("SELECT id FROM orders ORDER BY id LIMIT 3"));
    expectEverywhere(moved, { merged_in_proxy: 1 });
  });

  it("moves finished_in_home for an aggregate finished in the home region", async () => {
    const moved = await movedBy(() => client.query("SELECT country, count(*) FROM users GROUP BY country"));
    expectEverywhere(moved, { finished_in_home: 1 });
  });

  it("moves gathered for a join on non-key columns across regions", async () => {
    const moved = await movedBy(() =>
      client.query("SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id"),
    );
    expectEverywhere(moved, { gathered: 1 });
  });

  it("moves each finish through the extended protocol too", async () => {
    const moved = await movedBy(async () => {
      await client.query({ text: "SELECT id FROM orders ORDER BY id LIMIT $1", values: [3] });
      await client.query({
        text: "SELECT country, count(*) FROM users WHERE $1::int = 1 GROUP BY country",
        values: [1],
      });
      await client.query({
        text: "SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id WHERE $1::int = 1",
        values: [1],
      });
    });
    expectEverywhere(moved, { merged_in_proxy: 1, finished_in_home: 1, gathered: 1 });
  });

  it("counts BEGIN; ...; COMMIT; sent as one Query as one one-phase transaction", async () => {
    const moved = await movedBy(() =>
      client.query("BEGIN; UPDATE users SET age = age WHERE tenant_id = 'bob'; COMMIT;"),
    );
    expectEverywhere(moved, { one_phase: 1 });
  });

  it("counts one-Query blocks by how they end: chained, failed, and no block at all", async () => {
    const moved = await movedBy(async () => {
      // Committed, then the chained block rolled back.
      await client.query(
        "BEGIN; UPDATE users SET age = age WHERE tenant_id = 'bob'; COMMIT AND CHAIN; ROLLBACK;",
      );
      // The string stops at its error; the client's ROLLBACK ends the failed block.
      const failed = await client
        .query("BEGIN; SELECT name FROM users WHERE tenant_id = 'bob'; SELECT 1 / 0; COMMIT;")
        .catch((error: unknown) => error);
      expect((failed as { code?: string }).code).toBe("22012");
      await client.query("ROLLBACK");
      // A COMMIT ending only the string's own implicit block ends no block of the client's.
      await client.query("SELECT name FROM users WHERE tenant_id = 'bob'; COMMIT;");
    });
    expectEverywhere(moved, { one_phase: 1, aborted: 2 });
  });

  it("counts a one-Query block over two regions as one two-phase commit, and one rolled back as aborted", async () => {
    const moved = await movedBy(async () => {
      await client.query(
        "BEGIN; UPDATE users SET age = age WHERE tenant_id = 'alice'; UPDATE users SET age = age WHERE tenant_id = 'bob'; COMMIT;",
      );
      await client.query("BEGIN; SELECT name FROM users WHERE tenant_id = 'chandra'; ROLLBACK;");
    });
    expectEverywhere(moved, { two_phase_committed: 1, aborted: 1 });
  });
});
