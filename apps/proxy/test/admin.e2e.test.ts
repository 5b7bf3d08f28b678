import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ProxySnapshot } from "@geo/admin";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScrape, type Scrape } from "./admin-prometheus.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

/** docs/admin.md, whose /snapshot example must have the fields a real snapshot has. */
const ADMIN_DOC = fileURLToPath(new URL("../../../docs/admin.md", import.meta.url));

/**
 * The field names of a JSON value, as paths: an object's keys, recursively; an array's first
 * element (an empty array says nothing about its elements). Maps keyed by data (regions, plan
 * kinds, SQLSTATEs) are compared by their values' shape, not their keys.
 */
function fieldPaths(value: unknown, path: string, out: Set<string>, dataKeyed: ReadonlySet<string>): void {
  if (Array.isArray(value)) {
    if (value.length > 0) fieldPaths(value[0], `${path}[]`, out, dataKeyed);
    return;
  }
  if (value === null || typeof value !== "object") return;
  for (const [key, inner] of Object.entries(value)) {
    const at = dataKeyed.has(path) ? `${path}.*` : `${path}.${key}`;
    out.add(at);
    fieldPaths(inner, at, out, dataKeyed);
  }
}

/** The dashboard operators import into Grafana: a metric renamed in the proxy must fail here. */
const GRAFANA = fileURLToPath(new URL("../../../docs/grafana-dashboard.json", import.meta.url));

let regions: RealRegions;
let client: pg.Client;
let adminUrl: string;

beforeAll(async () => {
  regions = await startRealRegions("\n[admin]\nport = 0\n");
  const admin = regions.proxy.runtime.observability.admin;
  if (admin === undefined) throw new Error("the [admin] section did not start the admin port");
  adminUrl = admin.url;
  client = new pg.Client({
    host: regions.proxy.host,
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await regions?.close();
});

async function get(path: string): Promise<Response> {
  return fetch(`${adminUrl}${path}`);
}

async function scrape(): Promise<Scrape> {
  const response = await get("/metrics");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseScrape(await response.text());
}

function port(index: number): number {
  return regions.cluster.servers[index]!.port;
}

describe("the admin port served by the proxy, in front of three PostgreSQL servers", () => {
  it("counts reads over several regions by how they were finished, through both protocols", async () => {
    const before = await scrape();
    await client.query("SELECT id FROM orders");
    await client.query("SELECT id FROM orders ORDER BY id LIMIT 3");
    await client.query("SELECT country, count(*) FROM users GROUP BY country");
    await client.query("SELECT o.id FROM orders o JOIN users u ON u.id = o.user_id");
    await client.query({
      text: "SELECT country, count(*) FROM users WHERE $1::int = 1 GROUP BY country",
      values: [1],
    });
    const after = await scrape();
    const delta = (finish: string): number =>
      (after.value("geoproxy_multi_region_reads_total", { finish }) ?? 0) -
      (before.value("geoproxy_multi_region_reads_total", { finish }) ?? 0);
    expect(delta("merged_in_proxy")).toBe(2);
    expect(delta("finished_in_home")).toBe(2);
    expect(delta("gathered")).toBe(1);
  });

  it("counts refusals by the planner's reason, through both protocols", async () => {
    const before = await scrape();
    for (const query of [
      { text: "UPDATE users SET tenant_id = 'x' WHERE tenant_id = 'alice'" },
      // Correlated with the written row: it cannot be read first (write-prereads.e2e).
      {
        text: "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = 'bob'",
      },
      {
        text: "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = $1",
        values: ["bob"],
      },
    ]) {
      const refused = await client.query(query).catch((error: unknown) => error);
      expect((refused as { code?: string }).code, query.text).toBe("0A000");
    }
    const after = await scrape();
    const delta = (reason: string): number =>
      (after.value("geoproxy_refusals_total", { reason }) ?? 0) -
      (before.value("geoproxy_refusals_total", { reason }) ?? 0);
    expect(delta("key-update")).toBe(1);
    expect(delta("write-reads-elsewhere")).toBe(2);
  });

  it("counts a workload in /metrics: statements per region and plan kind, refusals by SQLSTATE, clients", async () => {
    const before = await scrape();
    await client.query("SELECT name FROM users WHERE tenant_id = 'alice'");
    await client.query("SELECT name FROM users WHERE tenant_id = 'bob'");
    await client.query("SELECT id FROM orders WHERE tenant_id = 'chandra'");
    const refused = await client
      .query("UPDATE users SET tenant_id = 'x' WHERE tenant_id = 'alice'")
      .catch((error: unknown) => error);
    expect((refused as { code?: string }).code).toBe("0A000");
    await client.query("SHOW REGIONS");
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string> = {}): number =>
      (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    for (const region of ["eu-west", "us-east", "ap-south"]) {
      expect(delta("geoproxy_region_statements_total", { region }), region).toBe(1);
    }
    expect(delta("geoproxy_statements_left_home_total")).toBe(2);
    const count = "geoproxy_statement_duration_seconds_count";
    expect(delta(count, { plan: "one_region" })).toBe(3);
    expect(delta(count, { plan: "refused" })).toBe(1);
    expect(delta(count, { plan: "console" })).toBe(1);
    expect(delta("geoproxy_statement_duration_seconds_sum", { plan: "one_region" })).toBeGreaterThan(0);
    expect(delta("geoproxy_errors_total", { sqlstate: "0A000" })).toBe(1);
    expect(after.value("geoproxy_clients")).toBe(1);
    expect(after.value("geoproxy_info", { home_region: "eu-west" })).toBe(1);

    for (const index of [0, 1, 2]) {
      const endpoint = `127.0.0.1:${port(index)}`;
      expect(after.value("geoproxy_backend_up", { endpoint, role: "primary" }), endpoint).toBe(1);
      const idle = after.value("geoproxy_pool_connections", { endpoint, state: "idle" }) ?? -1;
      const busy = after.value("geoproxy_pool_connections", { endpoint, state: "busy" }) ?? -1;
      expect(idle + busy, endpoint).toBeGreaterThanOrEqual(1);
      expect(after.value("geoproxy_pool_waiting", { endpoint }), endpoint).toBe(0);
    }
    const hits = after.value("geoproxy_analysis_cache_hits_total") ?? 0;
    const misses = after.value("geoproxy_analysis_cache_misses_total") ?? 0;
    expect(misses).toBeGreaterThanOrEqual(1);
    expect(hits + misses).toBeGreaterThanOrEqual(5);
    expect(after.types.get("geoproxy_statement_duration_seconds")).toBe("histogram");
    expect(after.all("geoproxy_alert")).toEqual([]);
    expect(
      after.samples.filter((sample) => sample.name.startsWith("geoproxy_") && Number.isNaN(sample.value)),
    ).toEqual([]);
  });

  it("counts a read over every region as one scatter statement, once in each region", async () => {
    const before = await scrape();
    await client.query("SELECT count(*) FROM users");
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}): number =>
      (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    expect(delta("geoproxy_statement_duration_seconds_count", { plan: "scatter" })).toBe(1);
    for (const region of ["eu-west", "us-east", "ap-south"]) {
      expect(delta("geoproxy_region_statements_total", { region }), region).toBe(1);
    }
    expect(delta("geoproxy_statements_left_home_total")).toBe(1);
  });

  it("counts a connection while it is open and not after it closed", async () => {
    const second = new pg.Client({ host: regions.proxy.host, port: regions.proxy.port, user: "postgres" });
    await second.connect();
    await second.query("SELECT 1");
    expect((await scrape()).value("geoproxy_clients")).toBe(2);
    await second.end();
    await expect.poll(async () => (await scrape()).value("geoproxy_clients"), { timeout: 2_000 }).toBe(1);
  });

  it("answers /snapshot with the same state as JSON", async () => {
    await client.query("SELECT count(*) FROM orders WHERE tenant_id = 'bob'");
    const response = await get("/snapshot");
    expect(response.status).toBe(200);
    const snapshot = (await response.json()) as ProxySnapshot;
    expect(snapshot.homeRegion).toBe("eu-west");
    expect(snapshot.regions.map((region) => [region.id, region.home])).toEqual([
      ["ap-south", false],
      ["eu-west", true],
      ["us-east", false],
    ]);
    expect(snapshot.regions.flatMap((region) => region.endpoints.map((endpoint) => endpoint.health))).toEqual(
      ["up", "up", "up"],
    );
    // Probed on connections of their own while the admin port runs: each primary says it is not in recovery.
    expect(
      snapshot.regions.flatMap((region) => region.endpoints.map((e) => [e.role, e.inRecovery, e.lagBytes])),
    ).toEqual([
      ["primary", false, 0],
      ["primary", false, 0],
      ["primary", false, 0],
    ]);
    expect(snapshot.pools.map((pool) => pool.region).sort()).toEqual(["ap-south", "eu-west", "us-east"]);
    expect(snapshot.traffic.byRegion["us-east"]).toBeGreaterThanOrEqual(2);
    expect(snapshot.traffic.byPlan.one_region).toBeGreaterThanOrEqual(4);
    // The refusals of the two tests above: three, then one.
    expect(snapshot.traffic.errors["0A000"]).toBe(4);
    expect(snapshot.clients).toEqual({
      connected: 1,
      max: regions.proxy.runtime.config.server.maxConnections,
    });
    const oneRegion = snapshot.latency.find((summary) => summary.plan === "one_region");
    expect(oneRegion?.samples).toBeGreaterThanOrEqual(4);
    expect(oneRegion?.p50Ms).toBeGreaterThan(0);
    expect(snapshot.transactions).toEqual({
      outcomes: { one_phase: 0, two_phase_committed: 0, aborted: 0, in_doubt: 0 },
      inDoubt: [],
    });
    expect(snapshot.cache.misses).toBeGreaterThanOrEqual(1);
    expect(snapshot.alerts).toEqual([]);
  });

  it("has every field docs/admin.md's /snapshot example shows, and the example every field it has", async () => {
    // Something in each list the example fills, so both sides show their elements' fields.
    await client.query("SELECT country, count(*) FROM users GROUP BY country");
    await client
      .query("UPDATE users SET tenant_id = 'x' WHERE tenant_id = 'alice'")
      .catch((error: unknown) => error);
    const real = (await (await get("/snapshot")).json()) as unknown;
    const doc = readFileSync(ADMIN_DOC, "utf8");
    const example = /### `\/snapshot`\s+```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(example, "the /snapshot example of docs/admin.md").toBeDefined();
    const dataKeyed = new Set([".traffic.byRegion", ".traffic.errors"]);
    const documented = new Set<string>();
    const served = new Set<string>();
    fieldPaths(JSON.parse(example!), "", documented, dataKeyed);
    fieldPaths(real, "", served, dataKeyed);
    // A list empty in this run (no move under way) cannot show its elements' fields.
    const shown = (paths: Set<string>, other: Set<string>) =>
      [...paths].filter((path) => {
        const list = path.slice(0, path.indexOf("[]") + 2);
        return !path.includes("[]") || [...other].some((p) => p.startsWith(list));
      });
    expect(
      shown(documented, served).filter((path) => !served.has(path)),
      "documented, not served",
    ).toEqual([]);
    expect(
      shown(served, documented).filter((path) => !documented.has(path)),
      "served, not documented",
    ).toEqual([]);
  });

  it("counts a transaction block by how it ended", async () => {
    await client.query("BEGIN");
    await client.query("UPDATE users SET age = age WHERE tenant_id = 'bob'");
    await client.query("COMMIT");
    await client.query("BEGIN");
    await client.query("SELECT 1");
    await client.query("ROLLBACK");
    const snapshot = (await (await get("/snapshot")).json()) as ProxySnapshot;
    expect(snapshot.transactions.outcomes).toEqual({
      one_phase: 1,
      two_phase_committed: 0,
      aborted: 1,
      in_doubt: 0,
    });
  });

  it("says which region holds a key's rows at /key/<table>/<key>, as WHERE IS does", async () => {
    const alice = await get("/key/users/alice");
    expect(alice.status).toBe(200);
    expect(await alice.json()).toEqual({
      table: "users",
      key: "alice",
      region: "eu-west",
      state: "resident",
    });
    expect(await (await get("/key/orders/chandra")).json()).toEqual({
      table: "orders",
      key: "chandra",
      region: "ap-south",
      state: "resident",
    });
    expect(await (await get("/key/users/zoe%20smith")).json()).toEqual({
      table: "users",
      key: "zoe smith",
      region: "eu-west",
      state: "unlisted",
    });
    const unknown = await get("/key/customers/alice");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ sqlstate: "42P01" });
    const replicated = await get("/key/currencies/EUR");
    expect(replicated.status).toBe(400);
    expect(await replicated.json()).toMatchObject({ sqlstate: "42809" });
  });

  it("shows in /snapshot why each statement shape went where it did, through both protocols", async () => {
    await client.query("SELECT name FROM users WHERE tenant_id = 'alice'");
    await client.query({ text: "SELECT name FROM users WHERE tenant_id = $1", values: ["bob"] });
    await client.query("SELECT country, count(*) FROM users GROUP BY country ORDER BY country");
    await client.query("SELECT country, count(*) FROM users GROUP BY country ORDER BY country");
    const snapshot = (await (await get("/snapshot")).json()) as ProxySnapshot;
    const byShape = new Map(snapshot.decisions.map((decision) => [decision.shape, decision]));
    // Literals lifted out: the simple-protocol 'alice' is shaped like the extended $1.
    expect(byShape.get("SELECT name FROM users WHERE tenant_id = $1")).toMatchObject({
      plan: "one_region",
      finish: "relayed",
    });
    const scatter = byShape.get("SELECT country, count(*) FROM users GROUP BY country ORDER BY country");
    expect(scatter).toMatchObject({ plan: "scatter", count: 2, finish: "partial-aggregate" });
    expect([...(scatter?.regions ?? [])].sort()).toEqual(["ap-south", "eu-west", "us-east"]);
    // Most recent first.
    expect(snapshot.decisions[0]?.shape).toBe(scatter?.shape);
    expect(snapshot.decisions.length).toBeLessThanOrEqual(50);
  });

  it("lists the most refused shapes in /snapshot with their reason, SQLSTATE and count", async () => {
    for (const tenant of ["alice", "bob", "chandra"]) {
      const refused = await client
        // Correlated with the written row, so it cannot be read first (write-prereads.e2e).
        .query(
          `UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = '${tenant}'`,
        )
        .catch((error: unknown) => error);
      expect((refused as { code?: string }).code).toBe("0A000");
    }
    const snapshot = (await (await get("/snapshot")).json()) as ProxySnapshot;
    expect(snapshot.refusedShapes[0]).toMatchObject({
      shape:
        "UPDATE users u SET age = (SELECT max(age) FROM users v WHERE v.name = u.name) WHERE tenant_id = $1",
      reason: "write-reads-elsewhere",
      sqlstate: "0A000",
    });
    expect(snapshot.refusedShapes[0]?.count).toBeGreaterThanOrEqual(3);
    expect(
      snapshot.decisions.filter((decision) => decision.shape.startsWith("UPDATE users u SET age = (SELECT")),
    ).toEqual([]);
  });

  it("shows every region's directory keys in /snapshot's placement, and no move running", async () => {
    const snapshot = (await (await get("/snapshot")).json()) as ProxySnapshot;
    const expected = new Map<string, number>();
    for (const [, region] of regions.entries) expected.set(region, (expected.get(region) ?? 0) + 1);
    expect(snapshot.placement.regions.map((region) => [region.id, region.home, region.keys])).toEqual(
      ["ap-south", "eu-west", "us-east"].map((id) => [id, id === "eu-west", expected.get(id)]),
    );
    expect(snapshot.placement.moves).toEqual([]);
    expect(snapshot.placement.movesDone).toBe(0);
  });

  it("serves every metric the Grafana dashboard in docs/ reads", async () => {
    const dashboard = JSON.parse(readFileSync(GRAFANA, "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const names = new Set<string>();
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        for (const match of target.expr.matchAll(/\b(?:geoproxy|nodejs|process)_[a-z0-9_]+\b/g))
          names.add(match[0]);
      }
    }
    expect(names.size).toBeGreaterThanOrEqual(15);
    const metrics = await scrape();
    const served = new Set([...metrics.types.keys(), ...metrics.samples.map((sample) => sample.name)]);
    expect([...names].filter((name) => !served.has(name))).toEqual([]);
  });

  it("is ready while the home region answers, and not once its server stops", async () => {
    const ready = await get("/healthz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });

    // Clients straight to the home server see it go too.
    for (const direct of [regions.direct["eu-west"], regions.reference]) direct.on("error", () => undefined);
    await regions.cluster.stopServer(0);
    const down = await get("/healthz");
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ ready: false });

    const home = `127.0.0.1:${port(0)}`;
    const metrics = await scrape();
    expect(metrics.value("geoproxy_backend_up", { endpoint: home })).toBe(0);
    expect(metrics.value("geoproxy_alert", { name: "backend_down", subject: home })).toBe(1);
    const snapshot = (await (await get("/snapshot")).json()) as ProxySnapshot;
    // The node claim's session there ended with the server: writes across regions involving it wait for it.
    expect(snapshot.alerts.map((alert) => [alert.name, alert.subject])).toEqual([
      ["backend_down", home],
      ["node_claim_missing", "eu-west"],
    ]);
  });
});
