import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type {
  Alert,
  CacheStatus,
  LatencySummary,
  PoolStatus,
  RegionStatus,
  SchemaDriftStatus,
  SharedDirectoryStatus,
  TrafficCounts,
} from "../source/admin-source.js";
import {
  LEASE_STATES,
  PLAN_KINDS,
  type PlanKind,
  READ_FINISHES,
  type ReadFinish,
  TRANSACTION_OUTCOMES,
  type TransactionOutcome,
} from "../source/kinds.js";
import { BucketHistogram } from "./bucket-histogram.js";
import { LatencyWindow } from "./latency-window.js";

/** Upper bounds of the latency histogram, in seconds: a local round trip to a cross-ocean commit. */
export const DEFAULT_LATENCY_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Read at scrape time, never on a statement's path. Each is optional; a missing one leaves its series empty. */
export interface MetricCollectors {
  /** The analysis cache's cumulative hits and misses, and its size. */
  readonly cache?: () => CacheStatus;
  /** Occupancy of every backend pool. */
  readonly pools?: () => readonly PoolStatus[];
  /** Every region's endpoints with health and lag (the same list the snapshot carries). */
  readonly regions?: () => readonly RegionStatus[];
  /** Alerts true now. */
  readonly alerts?: () => readonly Alert[];
  /** Bytes received from (`in`) and sent to (`out`) each region's servers since start. */
  readonly regionBytes?: () => readonly {
    readonly region: string;
    readonly in: number;
    readonly out: number;
  }[];
  /** The latest schema drift check (the same status the snapshot carries). */
  readonly schemaDrift?: () => SchemaDriftStatus;
  /** The shared directory's lease, peers and held moves; undefined while the directory is not shared. */
  readonly shared?: () => SharedDirectoryStatus | undefined;
}

export interface ProxyMetricsOptions {
  /** `[server] node`; the `node` label of `geoproxy_info`. */
  readonly node: string;
  readonly homeRegion: string;
  /** Every region id of the topology; their series exist (at zero) from the start. */
  readonly regions: readonly string[];
  /** Histogram bucket upper bounds in seconds. */
  readonly buckets?: readonly number[];
  /** Recent statements kept per plan kind for the dashboard's percentiles (default 512). */
  readonly latencyWindow?: number;
  /** Node.js process metrics (`process_*`, `nodejs_*`) in the same registry (default true). */
  readonly processMetrics?: boolean;
  readonly collectors?: MetricCollectors;
}

const SQLSTATE_SHAPE = /^[0-9A-Z]{5}$/;
/** Distinct label values kept for open-ended labels; past it values fold into `other`. */
const MAX_OPEN_LABEL_VALUES = 512;
const PERCENTILE_RANKS = [50, 95, 99] as const;

type CollectorName = keyof MetricCollectors;

/**
 * Every figure the proxy exports, in a registry of its own (never prom-client's global one, so two
 * proxies in one process, or tests, never share series).
 *
 * The methods are meant for the statement path: each is a few additions on children created
 * up front, with no allocation for known label values. Pools, health, alerts and the cache are
 * pulled through {@link MetricCollectors} at scrape time instead.
 *
 * @example
 * ```ts
 * const metrics = new ProxyMetrics({ node: "eu-1", homeRegion: "eu-west", regions: ["eu-west", "us-east"] });
 * metrics.observeStatement("one_region", 0.0012);
 * metrics.countRegions(["eu-west"]);
 * const text = await metrics.render(); // Prometheus text format
 * ```
 */
export class ProxyMetrics {
  readonly registry: Registry;
  readonly homeRegion: string;

  #collectors: MetricCollectors;
  readonly #duration: BucketHistogram<PlanKind>;
  readonly #windowByPlan: Record<PlanKind, LatencyWindow>;
  readonly #countByPlan: Record<PlanKind, number>;
  readonly #errorCounts = new Map<string, number>();
  readonly #refusalCounts = new Map<string, number>();
  readonly #regionCounts = new Map<string, number>();
  #leftHomeCount = 0;
  readonly #readCounts: Record<ReadFinish, number>;
  readonly #transactionCounts: Record<TransactionOutcome, number>;
  #clientCount = 0;
  readonly #collectFailures: Counter<"collector">;
  /**
   * What each collector returned in the scrapes running now: read once per scrape, so the series
   * built from one reading agree with each other and a failure counts once.
   */
  readonly #readings = new Map<CollectorName, { readonly value: unknown } | undefined>();
  #scrapesRunning = 0;

  constructor(options: ProxyMetricsOptions) {
    this.registry = new Registry();
    this.homeRegion = options.homeRegion;
    this.#collectors = options.collectors ?? {};
    const registers = [this.registry];
    const windowSize = options.latencyWindow ?? 512;
    const metrics = this;

    const info = new Gauge({
      name: "geoproxy_info",
      help: "Always 1; labels name this proxy and its home region.",
      labelNames: ["node", "home_region"] as const,
      registers,
    });
    info.labels(options.node, options.homeRegion).set(1);

    this.#duration = new BucketHistogram({
      name: "geoproxy_statement_duration_seconds",
      help: "Time from a statement's arrival to its last reply byte, by plan kind.",
      label: "plan",
      values: PLAN_KINDS,
      bounds: options.buckets ?? DEFAULT_LATENCY_BUCKETS,
    });
    this.#duration.register(this.registry);
    this.#windowByPlan = byKey(PLAN_KINDS, () => new LatencyWindow(windowSize));
    this.#countByPlan = byKey(PLAN_KINDS, () => 0);
    this.#readCounts = byKey(READ_FINISHES, () => 0);
    this.#transactionCounts = byKey(TRANSACTION_OUTCOMES, () => 0);
    for (const region of options.regions) this.#regionCounts.set(region, 0);

    // The statement path only adds to plain numbers; each counter below copies them at scrape time.
    new Counter({
      name: "geoproxy_errors_total",
      help: "Errors sent to clients, by SQLSTATE.",
      labelNames: ["sqlstate"] as const,
      registers,
      collect() {
        copyCounts(this, "sqlstate", metrics.#errorCounts);
      },
    });
    new Counter({
      name: "geoproxy_refusals_total",
      help: "Statements refused because no region or combination can answer them exactly, by reason.",
      labelNames: ["reason"] as const,
      registers,
      collect() {
        copyCounts(this, "reason", metrics.#refusalCounts);
      },
    });
    new Counter({
      name: "geoproxy_region_statements_total",
      help: "Statements sent to each region; a statement over several regions counts once in each.",
      labelNames: ["region"] as const,
      registers,
      collect() {
        copyCounts(this, "region", metrics.#regionCounts);
      },
    });
    new Counter({
      name: "geoproxy_statements_left_home_total",
      help: "Statements that ran in at least one region other than the home region.",
      registers,
      collect() {
        this.reset();
        this.inc(metrics.#leftHomeCount);
      },
    });
    new Counter({
      name: "geoproxy_multi_region_reads_total",
      help: "Reads over several regions, by how their answer was finished.",
      labelNames: ["finish"] as const,
      registers,
      collect() {
        copyCounts(this, "finish", Object.entries(metrics.#readCounts));
      },
    });
    new Counter({
      name: "geoproxy_transactions_total",
      help: "Transactions by how they ended; in_doubt: decided but not yet acknowledged everywhere.",
      labelNames: ["outcome"] as const,
      registers,
      collect() {
        copyCounts(this, "outcome", Object.entries(metrics.#transactionCounts));
      },
    });
    new Gauge({
      name: "geoproxy_clients",
      help: "Client connections open now.",
      registers,
      collect() {
        this.set(metrics.#clientCount);
      },
    });

    this.#defineCollected(registers);
    // Registered after the collected families, so a failure is counted in the same scrape.
    this.#collectFailures = new Counter({
      name: "geoproxy_metric_collect_failures_total",
      help: "Scrapes at which a collector threw; its series were left out of that scrape.",
      labelNames: ["collector"] as const,
      registers,
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Replaces the scrape-time collectors (for a proxy that creates its pools after its metrics). */
  setCollectors(collectors: MetricCollectors): void {
    this.#collectors = collectors;
  }

  /** One statement answered (or refused) after `seconds`. */
  observeStatement(plan: PlanKind, seconds: number): void {
    this.#duration.observe(plan, seconds);
    this.#windowByPlan[plan].add(seconds);
    this.#countByPlan[plan] += 1;
  }

  /** The regions one statement ran in. Counts each, and once more if any is not the home region. */
  countRegions(regions: readonly string[]): void {
    let leftHome = false;
    for (const region of regions) {
      const count = this.#regionCounts.get(region);
      if (count !== undefined) this.#regionCounts.set(region, count + 1);
      else bumpOpen(this.#regionCounts, region);
      if (region !== this.homeRegion) leftHome = true;
    }
    if (leftHome) this.#leftHomeCount += 1;
  }

  /** One error sent to a client. A value that is not five digits or capitals counts as `XX000`. */
  countError(sqlstate: string): void {
    const count = this.#errorCounts.get(sqlstate);
    if (count !== undefined) this.#errorCounts.set(sqlstate, count + 1);
    else bumpOpen(this.#errorCounts, SQLSTATE_SHAPE.test(sqlstate) ? sqlstate : "XX000");
  }

  /**
   * One statement refused by the planner, by its reason (`cross-region-join`, `residency`, ...):
   * which statements an application would need to change. Reasons are a closed set.
   */
  countRefusal(reason: string): void {
    this.#refusalCounts.set(reason, (this.#refusalCounts.get(reason) ?? 0) + 1);
  }

  /** One read over several regions, finished as `finish` says. */
  countMultiRegionRead(finish: ReadFinish): void {
    this.#readCounts[finish] += 1;
  }

  /** One transaction ended. */
  countTransaction(outcome: TransactionOutcome): void {
    this.#transactionCounts[outcome] += 1;
  }

  clientConnected(): void {
    this.#clientCount += 1;
  }

  clientDisconnected(): void {
    if (this.#clientCount > 0) this.#clientCount -= 1;
  }

  /** Client connections open now, as counted by the two methods above. */
  get connectedClients(): number {
    return this.#clientCount;
  }

  /** Cumulative traffic, in the shape of {@link ProxySnapshot.traffic}. */
  traffic(): TrafficCounts {
    const byRegion: Record<string, number> = {};
    for (const [region, count] of this.#regionCounts) byRegion[region] = count;
    const errors: Record<string, number> = {};
    for (const [code, count] of this.#errorCounts) errors[code] = count;
    let statements = 0;
    for (const plan of PLAN_KINDS) statements += this.#countByPlan[plan];
    return {
      statements,
      byPlan: { ...this.#countByPlan },
      byRegion,
      leftHome: this.#leftHomeCount,
      multiRegionReads: { ...this.#readCounts },
      errors,
    };
  }

  /** Percentiles over the recent window of each plan kind, in milliseconds. */
  latency(): LatencySummary[] {
    return PLAN_KINDS.map((plan) => {
      const window = this.#windowByPlan[plan];
      const [p50, p95, p99] = window.percentiles(PERCENTILE_RANKS);
      return { plan, samples: window.size, p50Ms: toMs(p50), p95Ms: toMs(p95), p99Ms: toMs(p99) };
    });
  }

  /** Cumulative transaction outcomes. */
  transactionOutcomes(): Record<TransactionOutcome, number> {
    return { ...this.#transactionCounts };
  }

  /** The registry in Prometheus text format (runs the collectors). */
  async render(): Promise<string> {
    this.#scrapesRunning += 1;
    try {
      return await this.registry.metrics();
    } finally {
      this.#scrapesRunning -= 1;
      if (this.#scrapesRunning === 0) this.#readings.clear();
    }
  }

  /** The Content-Type of {@link render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  #read<T>(name: CollectorName, read: () => T): T | undefined {
    const memo = this.#scrapesRunning > 0;
    if (memo && this.#readings.has(name)) return this.#readings.get(name)?.value as T | undefined;
    let reading: { readonly value: T } | undefined;
    try {
      reading = { value: read() };
    } catch {
      this.#collectFailures.labels(name).inc();
      reading = undefined;
    }
    if (memo) this.#readings.set(name, reading);
    return reading?.value;
  }

  #defineCollected(registers: Registry[]): void {
    const metrics = this;
    let lastHits = 0;
    let lastMisses = 0;
    // Whether this scrape's reading of the cache failed: its series are then left out, since
    // prom-client would print an unlabelled series as 0 (a false size, and a counter reset).
    let cacheFailed = false;
    const cacheSample = (): CacheStatus | undefined => {
      const read = metrics.#collectors.cache;
      const sample = read === undefined ? undefined : metrics.#read("cache", read);
      cacheFailed = read !== undefined && sample === undefined;
      return sample;
    };
    leaveOutWhen(
      new Counter({
        name: "geoproxy_analysis_cache_hits_total",
        help: "Statements whose analysis came from the cache. Hit ratio: hits / (hits + misses).",
        registers,
        collect() {
          const sample = cacheSample();
          if (sample !== undefined) lastHits = advanceCounter(this, lastHits, sample.hits);
        },
      }),
      () => cacheFailed,
    );
    leaveOutWhen(
      new Counter({
        name: "geoproxy_analysis_cache_misses_total",
        help: "Statements analysed afresh because their shape was not cached.",
        registers,
        collect() {
          const sample = cacheSample();
          if (sample !== undefined) lastMisses = advanceCounter(this, lastMisses, sample.misses);
        },
      }),
      () => cacheFailed,
    );
    leaveOutWhen(
      new Gauge({
        name: "geoproxy_analysis_cache_entries",
        help: "Statement shapes held in the analysis cache.",
        registers,
        collect() {
          this.reset();
          const sample = cacheSample();
          if (sample !== undefined) this.set(sample.entries);
        },
      }),
      () => cacheFailed,
    );

    const pools = (): readonly PoolStatus[] => {
      const read = metrics.#collectors.pools;
      return (read === undefined ? undefined : metrics.#read("pools", read)) ?? [];
    };
    new Gauge({
      name: "geoproxy_pool_connections",
      help: "Backend connections per pool, by state (idle or busy).",
      labelNames: ["endpoint", "region", "state"] as const,
      registers,
      collect() {
        this.reset();
        for (const pool of pools()) {
          this.labels(pool.endpoint, pool.region, "idle").set(pool.idle);
          this.labels(pool.endpoint, pool.region, "busy").set(pool.busy);
        }
      },
    });
    new Gauge({
      name: "geoproxy_pool_waiting",
      help: "Statements waiting for a backend connection, per pool.",
      labelNames: ["endpoint", "region"] as const,
      registers,
      collect() {
        this.reset();
        for (const pool of pools()) this.labels(pool.endpoint, pool.region).set(pool.waiting);
      },
    });
    new Gauge({
      name: "geoproxy_pool_max_connections",
      help: "Connections each pool may open.",
      labelNames: ["endpoint", "region"] as const,
      registers,
      collect() {
        this.reset();
        for (const pool of pools()) this.labels(pool.endpoint, pool.region).set(pool.max);
      },
    });

    const regions = (): readonly RegionStatus[] => {
      const read = metrics.#collectors.regions;
      return (read === undefined ? undefined : metrics.#read("regions", read)) ?? [];
    };
    new Gauge({
      name: "geoproxy_backend_up",
      help: "1 when the backend's last health probe succeeded, 0 when it is down or not yet probed.",
      labelNames: ["endpoint", "region", "role"] as const,
      registers,
      collect() {
        this.reset();
        for (const region of regions()) {
          for (const endpoint of region.endpoints) {
            this.labels(endpoint.endpoint, region.id, endpoint.role).set(endpoint.health === "up" ? 1 : 0);
          }
        }
      },
    });
    new Gauge({
      name: "geoproxy_backend_lag_bytes",
      help: "Bytes of WAL a backend is behind its region's primary (absent while unknown).",
      labelNames: ["endpoint", "region"] as const,
      registers,
      collect() {
        this.reset();
        for (const region of regions()) {
          for (const endpoint of region.endpoints) {
            if (endpoint.lagBytes !== null) this.labels(endpoint.endpoint, region.id).set(endpoint.lagBytes);
          }
        }
      },
    });

    new Counter({
      name: "geoproxy_region_bytes_total",
      help: "Bytes between the proxy and each region's servers: in = received from them, out = sent to them.",
      labelNames: ["region", "direction"] as const,
      registers,
      collect() {
        this.reset();
        const read = metrics.#collectors.regionBytes;
        const rows = (read === undefined ? undefined : metrics.#read("regionBytes", read)) ?? [];
        for (const row of rows) {
          this.inc({ region: row.region, direction: "in" }, row.in);
          this.inc({ region: row.region, direction: "out" }, row.out);
        }
      },
    });

    let driftFailed = false;
    leaveOutWhen(
      new Gauge({
        name: "geoproxy_schema_drift_tables",
        help: "Configured tables whose copies differ between regions at the latest schema check.",
        registers,
        collect() {
          this.reset();
          const read = metrics.#collectors.schemaDrift;
          const status = read === undefined ? undefined : metrics.#read("schemaDrift", read);
          driftFailed = read !== undefined && status === undefined;
          this.set(status?.tables.length ?? 0);
        },
      }),
      () => driftFailed,
    );

    // Absent, not 0, on a proxy whose directory is not shared (and the lease age before the first
    // visit got through): a 0 would read as a fresh lease.
    const shared = (): SharedDirectoryStatus | undefined => {
      const read = metrics.#collectors.shared;
      return read === undefined ? undefined : metrics.#read("shared", read);
    };
    let noLeaseAge = true;
    leaveOutWhen(
      new Gauge({
        name: "geoproxy_directory_lease_age_seconds",
        help: "Seconds since this proxy's last visit to the shared directory's authority that got through was sent.",
        registers,
        collect() {
          this.reset();
          const age = shared()?.leaseAgeMs ?? null;
          noLeaseAge = age === null;
          if (age !== null) this.set(age / 1000);
        },
      }),
      () => noLeaseAge,
    );
    new Gauge({
      name: "geoproxy_directory_peers",
      help: "Proxies of the shared directory, this one included, by lease state (held, lapsing, lapsed).",
      labelNames: ["lease"] as const,
      registers,
      collect() {
        this.reset();
        const status = shared();
        if (status === undefined) return;
        for (const lease of LEASE_STATES)
          this.labels(lease).set(status.peers.filter((peer) => peer.lease === lease).length);
      },
    });
    new Gauge({
      name: "geoproxy_move_holds",
      help: "Moves holding keys in this proxy now: by this_proxy (its own) or by peers (announced by other proxies).",
      labelNames: ["by"] as const,
      registers,
      collect() {
        this.reset();
        const status = shared();
        if (status === undefined) return;
        this.labels("this_proxy").set(status.movesHeld.own);
        this.labels("peers").set(status.movesHeld.peers);
      },
    });

    new Gauge({
      name: "geoproxy_alert",
      help: "1 for each alert true now; the series disappears when it stops being true.",
      labelNames: ["name", "subject"] as const,
      registers,
      collect() {
        this.reset();
        const read = metrics.#collectors.alerts;
        const alerts = (read === undefined ? undefined : metrics.#read("alerts", read)) ?? [];
        for (const alert of alerts) this.labels(alert.name, alert.subject).set(1);
      },
    });
  }
}

function byKey<K extends string, V>(keys: readonly K[], make: (key: K) => V): Record<K, V> {
  const out = {} as Record<K, V>;
  for (const key of keys) out[key] = make(key);
  return out;
}

/** Sets a labelled counter to the given counts (at scrape time; counts only grow). */
function copyCounts(counter: Counter<string>, label: string, counts: Iterable<[string, number]>): void {
  counter.reset();
  for (const [value, count] of counts) counter.inc({ [label]: value }, count);
}

/**
 * Counts a label value not seen before. Open-ended values (an unknown region, many SQLSTATEs) are
 * kept up to a bound, past which they share `other`, so a flood of odd values cannot grow memory.
 */
function bumpOpen(counts: Map<string, number>, value: string): void {
  const existing = counts.get(value);
  if (existing !== undefined) {
    counts.set(value, existing + 1);
    return;
  }
  const label = counts.size < MAX_OPEN_LABEL_VALUES ? value : "other";
  counts.set(label, (counts.get(label) ?? 0) + 1);
}

/**
 * Serves no sample of `metric` in a scrape where `failed()` is true once its collector ran; a
 * series without labels would otherwise be printed at its reset value of 0.
 */
function leaveOutWhen(metric: Counter<string> | Gauge<string>, failed: () => boolean): void {
  const get = metric.get.bind(metric);
  metric.get = async () => {
    const family = await get();
    return failed() ? { ...family, values: [] } : family;
  };
}

/** Moves a counter fed from a cumulative source to `current`; a source that went back restarts it. */
function advanceCounter(counter: Counter<string>, last: number, current: number): number {
  if (current < last) {
    counter.reset();
    counter.inc(current);
  } else {
    counter.inc(current - last);
  }
  return current;
}

function toMs(seconds: number | null | undefined): number | null {
  return seconds === null || seconds === undefined ? null : Math.round(seconds * 1e6) / 1e3;
}
