import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScrape, type Scrape } from "./admin-prometheus.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/**
 * Metrics of docs/metrics.md that admin.e2e does not move: each is read from the proxy's own
 * /metrics before and after the statements that must move it, in front of three real servers.
 */

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

async function scrape(): Promise<Scrape> {
  const response = await fetch(`${adminUrl}/metrics`);
  expect(response.status).toBe(200);
  return parseScrape(await response.text());
}

function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
}

describe("metrics moved by real statements through the proxy", () => {
  it("counts one statement shape more in geoproxy_analysis_cache_entries, and none for the same shape again", async () => {
    const before = await scrape();
    // A shape no other test sends; the second differs only by its literals.
    await client.query("SELECT name, age FROM users WHERE tenant_id = 'alice' AND age > 1 AND id < 900");
    const once = await scrape();
    await client.query("SELECT name, age FROM users WHERE tenant_id = 'bob' AND age > 2 AND id < 901");
    const twice = await scrape();
    expect(delta(before, once, "geoproxy_analysis_cache_entries")).toBe(1);
    expect(delta(before, once, "geoproxy_analysis_cache_misses_total")).toBe(1);
    expect(delta(once, twice, "geoproxy_analysis_cache_entries")).toBe(0);
    expect(delta(once, twice, "geoproxy_analysis_cache_hits_total")).toBe(1);
    expect(once.types.get("geoproxy_analysis_cache_entries")).toBe("gauge");
  });

  it("counts blocks in geoproxy_transactions_total: one region, two regions, rolled back, failed", async () => {
    const before = await scrape();
    await client.query("BEGIN");
    await client.query("UPDATE users SET age = age WHERE tenant_id = 'alice'");
    await client.query("COMMIT");
    // Rows in eu-west and us-east: committed in two phases.
    await client.query("BEGIN");
    await client.query("UPDATE users SET age = age WHERE tenant_id = 'alice'");
    await client.query("UPDATE users SET age = age WHERE tenant_id = 'bob'");
    await client.query("COMMIT");
    await client.query("BEGIN");
    await client.query("SELECT name FROM users WHERE tenant_id = 'chandra'");
    await client.query("ROLLBACK");
    // A COMMIT of a failed block ends it rolled back.
    await client.query("BEGIN");
    const failed = await client.query("SELECT 1 / 0").catch((error: unknown) => error);
    expect((failed as { code?: string }).code).toBe("22012");
    const commit = await client.query("COMMIT");
    expect(commit.command).toBe("ROLLBACK");
    const after = await scrape();
    const outcome = (value: string): number =>
      delta(before, after, "geoproxy_transactions_total", { outcome: value });
    expect(outcome("one_phase")).toBe(1);
    expect(outcome("two_phase_committed")).toBe(1);
    expect(outcome("aborted")).toBe(2);
    expect(outcome("in_doubt")).toBe(0);
    // Every outcome is a series from the first scrape on.
    expect(
      after
        .all("geoproxy_transactions_total")
        .map((sample) => sample.labels["outcome"])
        .sort(),
    ).toEqual(["aborted", "in_doubt", "one_phase", "two_phase_committed"]);
  });

  it("counts a statement across regions outside a block as one two-phase transaction", async () => {
    const before = await scrape();
    await client.query("UPDATE users SET age = age WHERE tenant_id IN ('alice', 'bob')");
    const after = await scrape();
    expect(delta(before, after, "geoproxy_transactions_total", { outcome: "two_phase_committed" })).toBe(1);
    expect(delta(before, after, "geoproxy_transactions_total", { outcome: "one_phase" })).toBe(0);
  });

  it("counts the bytes of a region's reply in geoproxy_region_bytes_total, both ways, and in /snapshot's placement", async () => {
    const before = await scrape();
    const rows = await client.query(
      "SELECT id, total, repeat('z', 5000) AS pad FROM orders WHERE tenant_id = 'bob'",
    );
    expect(rows.rowCount).toBe(5);
    const after = await scrape();
    const bytes = (region: string, direction: string): number =>
      delta(before, after, "geoproxy_region_bytes_total", { region, direction });
    // Five rows of at least 5,000 bytes came back from us-east; the statement went there.
    expect(bytes("us-east", "in")).toBeGreaterThan(25_000);
    expect(bytes("us-east", "out")).toBeGreaterThan("SELECT id, total".length);
    expect(bytes("ap-south", "in")).toBeLessThan(1_000);
    expect(after.types.get("geoproxy_region_bytes_total")).toBe("counter");
    const snapshot = (await (await fetch(`${adminUrl}/snapshot`)).json()) as {
      placement: { regions: { id: string; bytesIn: number; bytesOut: number }[] };
    };
    const us = snapshot.placement.regions.find((region) => region.id === "us-east");
    expect(us?.bytesIn).toBeGreaterThanOrEqual(
      after.value("geoproxy_region_bytes_total", { region: "us-east", direction: "in" })!,
    );
  });

  it("counts a collector that throws in geoproxy_metric_collect_failures_total and leaves its series out", async () => {
    // The analyzer's statistics failing, as a bug there would: the fault is put in, the scrape is real.
    const analyzer = regions.proxy.runtime.consoleContext("postgres").analyzer;
    const stats = analyzer.stats;
    const before = await scrape();
    expect(before.value("geoproxy_analysis_cache_entries")).toBeGreaterThan(0);
    analyzer.stats = () => {
      throw new Error("statistics unavailable");
    };
    let broken: Scrape;
    try {
      broken = await scrape();
    } finally {
      analyzer.stats = stats;
    }
    // Three cache series, one reading per scrape: one failure.
    expect(delta(before, broken, "geoproxy_metric_collect_failures_total", { collector: "cache" })).toBe(1);
    expect(delta(before, broken, "geoproxy_metric_collect_failures_total", { collector: "pools" })).toBe(0);
    expect(broken.value("geoproxy_analysis_cache_entries")).toBeUndefined();
    // Everything else is still served.
    expect(broken.value("geoproxy_clients")).toBe(1);
    const healed = await scrape();
    expect(delta(broken, healed, "geoproxy_metric_collect_failures_total", { collector: "cache" })).toBe(0);
    expect(healed.value("geoproxy_analysis_cache_entries")).toBeGreaterThan(0);
  });
});
