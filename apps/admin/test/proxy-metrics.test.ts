import { describe, expect, it } from "vitest";
import { PLAN_KINDS, ProxyMetrics, READ_FINISHES, TRANSACTION_OUTCOMES } from "../src/index.js";
import { FakeSource, REGIONS } from "./fake-source.js";
import { type Family, parsePrometheusText } from "./prometheus-text.js";

function metricsWithCollectors(processMetrics = false): { metrics: ProxyMetrics; source: FakeSource } {
  const metrics = new ProxyMetrics({
    node: "geo-test",
    homeRegion: "eu-west",
    regions: REGIONS,
    processMetrics,
  });
  const source = new FakeSource(metrics);
  metrics.setCollectors({
    cache: () => source.cache(),
    pools: () => source.pools(),
    regions: () => source.regions(),
    alerts: () => source.alerts,
  });
  return { metrics, source };
}

function family(families: Map<string, Family>, name: string): Family {
  const found = families.get(name);
  if (found === undefined) throw new Error(`no family ${name}`);
  return found;
}

function value(f: Family, sampleName: string, labels: Record<string, string>): number | undefined {
  return f.samples.find(
    (s) =>
      s.name === sampleName &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

describe("ProxyMetrics", () => {
  it("exposes every documented family with its type and label names, parseable by a strict reader", async () => {
    const { metrics } = metricsWithCollectors(true);
    const families = parsePrometheusText(await metrics.render());
    const expected: [string, string, string[]][] = [
      ["geoproxy_info", "gauge", ["home_region", "node"]],
      ["geoproxy_statement_duration_seconds", "histogram", ["le", "plan"]],
      ["geoproxy_region_statements_total", "counter", ["region"]],
      ["geoproxy_statements_left_home_total", "counter", []],
      ["geoproxy_multi_region_reads_total", "counter", ["finish"]],
      ["geoproxy_transactions_total", "counter", ["outcome"]],
      ["geoproxy_clients", "gauge", []],
      ["geoproxy_analysis_cache_hits_total", "counter", []],
      ["geoproxy_analysis_cache_misses_total", "counter", []],
      ["geoproxy_analysis_cache_entries", "gauge", []],
      ["geoproxy_pool_connections", "gauge", ["endpoint", "region", "state"]],
      ["geoproxy_pool_waiting", "gauge", ["endpoint", "region"]],
      ["geoproxy_pool_max_connections", "gauge", ["endpoint", "region"]],
      ["geoproxy_backend_up", "gauge", ["endpoint", "region", "role"]],
      ["geoproxy_backend_lag_bytes", "gauge", ["endpoint", "region"]],
    ];
    for (const [name, type, labelNames] of expected) {
      const f = family(families, name);
      expect(f.type, name).toBe(type);
      expect(f.help.length, name).toBeGreaterThan(10);
      expect(f.samples.length, name).toBeGreaterThan(0);
      for (const sample of f.samples) {
        const own = sample.name.endsWith("_bucket") ? labelNames : labelNames.filter((l) => l !== "le");
        expect(Object.keys(sample.labels).sort(), sample.name).toEqual(own);
      }
    }
    for (const name of [
      "geoproxy_errors_total",
      "geoproxy_refusals_total",
      "geoproxy_alert",
      "geoproxy_metric_collect_failures_total",
    ]) {
      expect(families.has(name), name).toBe(true);
    }
    expect(families.has("process_cpu_user_seconds_total")).toBe(true);
    for (const name of families.keys()) {
      if (name.startsWith("geoproxy_") && family(families, name).type === "counter")
        expect(name).toMatch(/_total$/);
    }
  });

  it("has every plan kind, read finish, transaction outcome and region at zero before any traffic", async () => {
    const { metrics } = metricsWithCollectors();
    const families = parsePrometheusText(await metrics.render());
    const duration = family(families, "geoproxy_statement_duration_seconds");
    for (const plan of PLAN_KINDS) {
      expect(value(duration, "geoproxy_statement_duration_seconds_count", { plan })).toBe(0);
    }
    const reads = family(families, "geoproxy_multi_region_reads_total");
    for (const finish of READ_FINISHES) expect(value(reads, reads.name, { finish })).toBe(0);
    const txns = family(families, "geoproxy_transactions_total");
    for (const outcome of TRANSACTION_OUTCOMES) expect(value(txns, txns.name, { outcome })).toBe(0);
    const regions = family(families, "geoproxy_region_statements_total");
    for (const region of REGIONS) expect(value(regions, regions.name, { region })).toBe(0);
  });

  it("counts statements, regions, departures from home, errors, reads, transactions and clients", async () => {
    const { metrics } = metricsWithCollectors();
    metrics.observeStatement("one_region", 0.002);
    metrics.observeStatement("one_region", 0.004);
    metrics.observeStatement("scatter", 0.03);
    metrics.countRegions(["eu-west"]);
    metrics.countRegions(["eu-west", "us-east"]);
    metrics.countRegions(["ap-south"]);
    metrics.countError("0A000");
    metrics.countError("0A000");
    metrics.countError("not a sqlstate");
    metrics.countMultiRegionRead("finished_in_home");
    metrics.countTransaction("two_phase_committed");
    metrics.countTransaction("in_doubt");
    metrics.clientConnected();
    metrics.clientConnected();
    metrics.clientDisconnected();
    const families = parsePrometheusText(await metrics.render());
    const duration = family(families, "geoproxy_statement_duration_seconds");
    expect(value(duration, `${duration.name}_count`, { plan: "one_region" })).toBe(2);
    expect(value(duration, `${duration.name}_bucket`, { plan: "one_region", le: "0.0025" })).toBe(1);
    expect(value(duration, `${duration.name}_sum`, { plan: "scatter" })).toBeCloseTo(0.03);
    metrics.observeStatement("refused", 0.005);
    const edge = family(parsePrometheusText(await metrics.render()), duration.name);
    expect(value(edge, `${duration.name}_bucket`, { plan: "refused", le: "0.0025" })).toBe(0);
    expect(value(edge, `${duration.name}_bucket`, { plan: "refused", le: "0.005" })).toBe(1);
    expect(value(edge, `${duration.name}_bucket`, { plan: "refused", le: "+Inf" })).toBe(1);
    const regions = family(families, "geoproxy_region_statements_total");
    expect(value(regions, regions.name, { region: "eu-west" })).toBe(2);
    expect(value(regions, regions.name, { region: "us-east" })).toBe(1);
    expect(family(families, "geoproxy_statements_left_home_total").samples[0]?.value).toBe(2);
    const errors = family(families, "geoproxy_errors_total");
    expect(value(errors, errors.name, { sqlstate: "0A000" })).toBe(2);
    expect(value(errors, errors.name, { sqlstate: "XX000" })).toBe(1);
    const reads = family(families, "geoproxy_multi_region_reads_total");
    expect(value(reads, reads.name, { finish: "finished_in_home" })).toBe(1);
    const txns = family(families, "geoproxy_transactions_total");
    expect(value(txns, txns.name, { outcome: "in_doubt" })).toBe(1);
    expect(family(families, "geoproxy_clients").samples[0]?.value).toBe(1);
    expect(metrics.traffic()).toMatchObject({
      statements: 4,
      byPlan: { one_region: 2, scatter: 1, refused: 1 },
      byRegion: { "eu-west": 2, "us-east": 1, "ap-south": 1 },
      leftHome: 2,
      errors: { "0A000": 2, XX000: 1 },
    });
  });

  it("reads pools, backends, cache and alerts through the collectors at scrape time", async () => {
    const { metrics, source } = metricsWithCollectors();
    source.alerts = [{ name: "backend_down", subject: "ap.db:5432", message: "no answer", since: "x" }];
    let families = parsePrometheusText(await metrics.render());
    const pools = family(families, "geoproxy_pool_connections");
    expect(value(pools, pools.name, { endpoint: "eu.db:5432", region: "eu-west", state: "busy" })).toBe(2);
    expect(value(pools, pools.name, { endpoint: "eu.db:5432", region: "eu-west", state: "idle" })).toBe(3);
    const waiting = family(families, "geoproxy_pool_waiting");
    expect(value(waiting, waiting.name, { endpoint: "us.db:5432", region: "us-east" })).toBe(4);
    const up = family(families, "geoproxy_backend_up");
    expect(value(up, up.name, { endpoint: "ap.db:5432", region: "ap-south", role: "primary" })).toBe(0);
    expect(value(up, up.name, { endpoint: "eu-r.db:5432", region: "eu-west", role: "replica" })).toBe(1);
    const lag = family(families, "geoproxy_backend_lag_bytes");
    expect(value(lag, lag.name, { endpoint: "eu-r.db:5432", region: "eu-west" })).toBe(4096);
    expect(lag.samples.some((s) => s.labels["endpoint"] === "ap.db:5432")).toBe(false);
    expect(family(families, "geoproxy_analysis_cache_hits_total").samples[0]?.value).toBe(90);
    expect(family(families, "geoproxy_analysis_cache_misses_total").samples[0]?.value).toBe(10);
    const alert = family(families, "geoproxy_alert");
    expect(alert.samples).toEqual([
      { name: "geoproxy_alert", labels: { name: "backend_down", subject: "ap.db:5432" }, value: 1 },
    ]);

    source.alerts = [];
    families = parsePrometheusText(await metrics.render());
    expect(family(families, "geoproxy_alert").samples).toEqual([]);
    expect(family(families, "geoproxy_analysis_cache_hits_total").samples[0]?.value).toBe(90);
  });

  it("leaves a throwing collector's series out and counts the failure instead of failing the scrape", async () => {
    const metrics = new ProxyMetrics({
      node: "n",
      homeRegion: "eu-west",
      regions: [],
      processMetrics: false,
    });
    metrics.setCollectors({
      pools: () => {
        throw new Error("pool table busy");
      },
    });
    const families = parsePrometheusText(await metrics.render());
    expect(family(families, "geoproxy_pool_connections").samples).toEqual([]);
    const failures = family(families, "geoproxy_metric_collect_failures_total");
    // Three pool series, one reading: one failure per scrape.
    expect(value(failures, failures.name, { collector: "pools" })).toBe(1);
    const again = family(
      parsePrometheusText(await metrics.render()),
      "geoproxy_metric_collect_failures_total",
    );
    expect(value(again, again.name, { collector: "pools" })).toBe(2);
  });

  it("counts the drifted tables of the latest schema check, 0 when none, and leaves the gauge out when reading it fails", async () => {
    const { metrics, source } = metricsWithCollectors();
    const gauge = async () =>
      family(parsePrometheusText(await metrics.render()), "geoproxy_schema_drift_tables").samples;
    expect(await gauge()).toEqual([{ name: "geoproxy_schema_drift_tables", labels: {}, value: 0 }]);
    metrics.setCollectors({ schemaDrift: () => source.schemaDrift });
    source.schemaDrift = {
      checkedAt: "2026-01-01T00:00:00.000Z",
      reference: "eu-west",
      tables: [
        {
          table: "public.orders",
          regions: [{ region: "us-east", status: "differs", detail: "extra column note text" }],
        },
        { table: "public.users", regions: [{ region: "ap-south", status: "missing", detail: "no table" }] },
      ],
    };
    expect((await gauge())[0]?.value).toBe(2);
    source.schemaDrift = { ...source.schemaDrift, tables: [] };
    expect((await gauge())[0]?.value).toBe(0);
    metrics.setCollectors({
      schemaDrift: () => {
        throw new Error("report not readable");
      },
    });
    const families = parsePrometheusText(await metrics.render());
    expect(family(families, "geoproxy_schema_drift_tables").samples).toEqual([]);
    const failures = family(families, "geoproxy_metric_collect_failures_total");
    expect(value(failures, failures.name, { collector: "schemaDrift" })).toBe(1);
  });

  it("gives exact nearest-rank percentiles over the recent window in milliseconds", () => {
    const metrics = new ProxyMetrics({
      node: "n",
      homeRegion: "eu-west",
      regions: [],
      processMetrics: false,
      latencyWindow: 100,
    });
    for (let ms = 1; ms <= 200; ms++) metrics.observeStatement("one_region", ms / 1000);
    const summary = metrics.latency().find((s) => s.plan === "one_region");
    expect(summary).toEqual({ plan: "one_region", samples: 100, p50Ms: 150, p95Ms: 195, p99Ms: 199 });
    expect(metrics.latency().find((s) => s.plan === "scatter")?.p99Ms).toBeNull();
  });

  it("keeps two instances' series apart: no global registry", async () => {
    const a = new ProxyMetrics({ node: "a", homeRegion: "eu-west", regions: [], processMetrics: false });
    const b = new ProxyMetrics({ node: "b", homeRegion: "eu-west", regions: [], processMetrics: false });
    a.countError("40001");
    const families = parsePrometheusText(await b.render());
    expect(family(families, "geoproxy_errors_total").samples).toEqual([]);
  });
});

describe("docs/metrics.md", () => {
  it("documents exactly the geoproxy_ families the registry exposes", async () => {
    const { readFileSync } = await import("node:fs");
    const doc = readFileSync(new URL("../../../docs/metrics.md", import.meta.url), "utf8");
    const documented = new Set([...doc.matchAll(/^\| `(geoproxy_[a-z_]+)`/gm)].map((m) => m[1]));
    const { metrics } = metricsWithCollectors();
    const exposed = new Set(
      [...parsePrometheusText(await metrics.render()).keys()].filter((n) => n.startsWith("geoproxy_")),
    );
    expect([...documented].sort()).toEqual([...exposed].sort());
  });
});

describe("refusals", () => {
  it("counts each refusal under its reason", async () => {
    const { metrics } = metricsWithCollectors();
    metrics.countRefusal("cross-region-join");
    metrics.countRefusal("cross-region-join");
    metrics.countRefusal("residency");
    const samples = family(parsePrometheusText(await metrics.render()), "geoproxy_refusals_total").samples;
    expect(samples.map((s) => [s.labels["reason"], s.value]).sort()).toEqual([
      ["cross-region-join", 2],
      ["residency", 1],
    ]);
  });
});
