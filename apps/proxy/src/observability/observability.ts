import {
  type AdminSource,
  type Alert,
  type CacheStatus,
  type KeyLocation,
  type KeyLookupFailure,
  type PlacementStatus,
  type PoolStatus,
  ProxyMetrics,
  type ProxySnapshot,
  type ReadFinish,
  type RegionStatus,
  type RunningAdminServer,
  type SchemaDriftStatus,
  type TransactionOutcome,
} from "@geo/admin";
import type { Directory, GeoConfig, Topology } from "@geo/core";
import type { HealthMonitor } from "@geo/pool";
import type { Analysis, Analyzer } from "@geo/sql";
import type { ConsoleClient, ConsoleContext, ObservedState } from "../console/context.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { MoveProgress } from "../moves/move-keys.js";
import type { Route } from "../routing/router.js";
import type { SchemaDriftReport } from "../server/schema-drift-report.js";
import { startAdminPort } from "./admin-port.js";
import { AlertBook, type Fact } from "./alert-book.js";
import { probedRegions, probeFacts, probeMonitor } from "./backend-probes.js";
import type { BackendTraffic } from "./backend-traffic.js";
import { EndpointHealth, endpointName } from "./endpoint-health.js";
import { InDoubtLedger } from "./in-doubt-ledger.js";
import { lookUpKey } from "./key-lookup.js";
import type { ObservableSession } from "./observable-session.js";
import { ObservedClient } from "./observed-client.js";
import type { RegionPoolStats } from "./region-pool-stats.js";
import { RouteBook } from "./route-book.js";
import { schemaDriftStatus } from "./schema-drift-status.js";

export interface ObservabilityOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly directory: Directory;
  readonly analyzer: Analyzer;
  readonly pools: RegionPools;
  /** The live planner, for the key lookup's console context. */
  readonly plan: ConsoleContext["plan"];
  readonly log: Logger;
  /** How long the readiness check may take to get and use a home connection (default 2000 ms). */
  readonly readyTimeoutMs?: number;
  /**
   * The proxy's health monitor, when it runs one. Without it, one is started here while the admin
   * port is configured (see README.md); otherwise health follows the pools.
   */
  readonly health?: HealthMonitor;
  /**
   * Regions whose primary did not answer at start, with why: down from the first reading (health,
   * alerts, metrics) until a connection or a probe finds them up.
   */
  readonly downAtStart?: readonly { readonly region: string; readonly reason: string }[];
  /** Facts known elsewhere in the proxy (a region's collation), added to the alerts when read. */
  readonly facts?: () => readonly Fact[];
  /**
   * The analysis a route was decided from (the router's `analysisOf`): with it, the recent
   * decisions and refused shapes are recorded; without it, only counted.
   */
  readonly analysisOf?: (route: Route) => Analysis | undefined;
  /** The replicas' pools, when the topology lists replicas: in /metrics, /snapshot and alerts too. */
  readonly replicaPools?: () => readonly RegionPoolStats[];
  /** Bytes on the backend connections, by `host:port`: each region's traffic in the placement map. */
  readonly traffic?: BackendTraffic;
  /** The schema drift check's latest report: the drifted tables in /metrics and /snapshot. */
  readonly schemaDrift?: () => SchemaDriftReport;
}

/** Directory keys are counted per region at most this often (a large directory is a long walk). */
const KEY_COUNT_INTERVAL_MS = 5000;

/** What a proxy without the schema check shows: nothing checked, nothing drifted. */
const NOT_CHECKED: SchemaDriftReport = { reference: undefined, rows: [], checkedAt: undefined };

/**
 * What the proxy counts and shows about itself: the metrics of every statement, the clients
 * connected, the primaries' health, alerts, transactions in doubt, and the admin port serving
 * them when the configuration has an `[admin]` section. The session reports to it through a few
 * calls (see {@link ObservedClient}); the console and the admin port read it.
 *
 * @example
 * ```ts
 * const observability = await Observability.start({ config, topology, directory, analyzer, pools, plan, log });
 * observability.multiRegionRead("merged_in_proxy"); // from the scatter-gather executor
 * observability.transactionEnded("two_phase_committed"); // from the commit coordinator
 * await observability.close();
 * ```
 */
export class Observability implements AdminSource {
  readonly metrics: ProxyMetrics;
  /** Two-phase commits decided but not acknowledged everywhere; the commit coordinator feeds it. */
  readonly inDoubt = new InDoubtLedger();
  /** The observed state as the console reads it. */
  readonly console: ObservedState;
  readonly #options: ObservabilityOptions;
  readonly #health: EndpointHealth;
  readonly #alerts = new AlertBook();
  readonly #clients = new Set<ObservedClient>();
  readonly #startedAt = Date.now();
  /** Recent routing decisions and refused shapes of real statements. */
  readonly routes = new RouteBook();
  #moves: (() => MoveProgress) | undefined;
  #keyCounts:
    | {
        readonly at: number;
        readonly size: number;
        readonly done: number;
        readonly byRegion: Map<string, number>;
      }
    | undefined;
  #admin: RunningAdminServer | undefined;
  #monitor: HealthMonitor | undefined;
  /** The monitor was started here, so it is stopped here. */
  #ownsMonitor = false;
  /** The last report read and what it showed; a check replaces its report, so identity says it is new. */
  #drift: { readonly report: SchemaDriftReport; readonly status: SchemaDriftStatus } | undefined;

  private constructor(options: ObservabilityOptions) {
    this.#options = options;
    const { config, topology } = options;
    this.#health = new EndpointHealth(
      topology,
      new Date(),
      new Set((options.downAtStart ?? []).map((down) => down.region)),
    );
    this.metrics = new ProxyMetrics({
      node: config.server.node,
      homeRegion: topology.home.id,
      regions: topology.regionIds,
    });
    this.metrics.setCollectors({
      pools: () => this.pools(),
      regions: () => this.regions(),
      alerts: () => this.alerts(),
      cache: () => this.cache(),
      regionBytes: () => [...this.#bytesByRegion()].map(([region, bytes]) => ({ region, ...bytes })),
      schemaDrift: () => this.schemaDrift(),
    });
    this.console = {
      regions: () => this.regions(),
      alerts: () => this.alerts(),
      traffic: () => this.metrics.traffic(),
      latency: () => this.metrics.latency(),
      transactionOutcomes: () => this.metrics.transactionOutcomes(),
      inDoubt: () => this.inDoubt.list(),
      clients: () => this.clients(),
    };
  }

  /**
   * Creates the metrics and, when `[admin]` is configured, starts the admin port. A port that
   * cannot start throws a StartupError naming the field to change.
   */
  static async start(options: ObservabilityOptions): Promise<Observability> {
    const observability = new Observability(options);
    const admin = options.config.admin;
    observability.#monitor = options.health;
    if (options.health === undefined && admin !== undefined) {
      const monitor = probeMonitor(options.config, options.topology);
      if (monitor !== undefined) {
        await monitor.start();
        observability.#monitor = monitor;
        observability.#ownsMonitor = true;
      }
    }
    // Down at once, not after the monitor's failed probes add up; its next answered probe lifts it.
    for (const down of options.downAtStart ?? []) {
      const primary = options.topology.region(down.region)?.primary;
      if (primary !== undefined) observability.#monitor?.reportFailure(primary, down.reason);
    }
    if (admin !== undefined) {
      try {
        observability.#admin = await startAdminPort({
          config: options.config,
          admin,
          source: observability,
          metrics: observability.metrics,
          log: options.log,
        });
      } catch (error) {
        await observability.close();
        throw error;
      }
    }
    return observability;
  }

  /** The health monitor probing the backends, when one runs. */
  get health(): HealthMonitor | undefined {
    return this.#monitor;
  }

  /** The running admin port, when configured. */
  get admin(): RunningAdminServer | undefined {
    return this.#admin;
  }

  /** Starts observing a client connection; it is counted until its socket closes. */
  track(session: ObservableSession): ObservedClient {
    const analysisOf = this.#options.analysisOf;
    const client = new ObservedClient(
      session,
      this.metrics,
      this.#options.topology.home.id,
      analysisOf === undefined ? undefined : { book: this.routes, analysisOf },
    );
    const metrics = this.metrics;
    session.relay.onErrorSent = (sqlstate) => metrics.countError(sqlstate);
    this.#clients.add(client);
    this.metrics.clientConnected();
    void session.closed.then(() => {
      this.#clients.delete(client);
      this.metrics.clientDisconnected();
    });
    return client;
  }

  /** Where moves report their progress (RELOCATE, REBALANCE), once they started. */
  watchMoves(progress: () => MoveProgress): void {
    this.#moves = progress;
  }

  /** A read over several regions was answered, finished as `finish` says (scatter-gather calls this). */
  multiRegionRead(finish: ReadFinish): void {
    this.metrics.countMultiRegionRead(finish);
  }

  /** A transaction ended (the session, and the commit coordinator for two-phase outcomes). */
  transactionEnded(outcome: TransactionOutcome): void {
    this.metrics.countTransaction(outcome);
  }

  /**
   * A transaction block on the session's own connections ended: committed in one region, or
   * rolled back. A block the client prepared itself (PREPARE TRANSACTION) has not ended yet.
   */
  blockEnded(action: "commit" | "rollback" | "prepare" | (string & {}), committed: boolean): void {
    if (action === "prepare") return;
    this.metrics.countTransaction(committed ? "one_phase" : "aborted");
  }

  /** An ErrorResponse went to a client. */
  errorSent(sqlstate: string): void {
    this.metrics.countError(sqlstate);
  }

  // ------------------------------------------------------------------------------------------
  // AdminSource
  // ------------------------------------------------------------------------------------------

  snapshot(): ProxySnapshot {
    const { config, topology } = this.#options;
    return {
      node: config.server.node,
      takenAt: new Date().toISOString(),
      uptimeSeconds: (Date.now() - this.#startedAt) / 1000,
      homeRegion: topology.home.id,
      regions: this.regions(),
      pools: this.pools(),
      traffic: this.metrics.traffic(),
      latency: this.metrics.latency(),
      transactions: { outcomes: this.metrics.transactionOutcomes(), inDoubt: this.inDoubt.list() },
      alerts: this.alerts(),
      clients: { connected: this.metrics.connectedClients, max: config.server.maxConnections },
      cache: this.cache(),
      placement: this.placement(),
      decisions: this.routes.decisions(),
      refusedShapes: this.routes.refusedShapes(),
      schemaDrift: this.schemaDrift(),
    };
  }

  /** The tables whose copies differ between regions, at the latest schema check. */
  schemaDrift(): SchemaDriftStatus {
    const report = this.#options.schemaDrift?.() ?? NOT_CHECKED;
    if (this.#drift?.report !== report) this.#drift = { report, status: schemaDriftStatus(report) };
    return this.#drift.status;
  }

  /** Keys per region from the directory, rows moved since start, moves running. */
  placement(): PlacementStatus {
    const { topology } = this.#options;
    const progress = this.#moves?.();
    const keys = this.#countKeys(progress?.done ?? 0);
    const bytes = this.#bytesByRegion();
    return {
      regions: topology.regionIds.map((id) => ({
        id,
        home: id === topology.home.id,
        keys: keys.get(id) ?? 0,
        rowsIn: progress?.rowsIn.get(id) ?? 0,
        rowsOut: progress?.rowsOut.get(id) ?? 0,
        bytesIn: bytes.get(id)?.in ?? 0,
        bytesOut: bytes.get(id)?.out ?? 0,
      })),
      moves: (progress?.running ?? []).map((move) => ({
        keys: move.keys,
        to: move.to,
        startedAt: move.startedAt.toISOString(),
      })),
      movesDone: progress?.done ?? 0,
    };
  }

  /** Bytes received from and sent to each region's servers (primary and replicas) since start. */
  #bytesByRegion(): Map<string, { in: number; out: number }> {
    const regionOf = new Map<string, string>();
    for (const region of this.#options.topology.regions) {
      for (const endpoint of [region.primary, ...region.replicas])
        regionOf.set(`${endpoint.host}:${endpoint.port}`, region.id);
    }
    const out = new Map<string, { in: number; out: number }>();
    for (const [address, bytes] of this.#options.traffic?.totals() ?? []) {
      const region = regionOf.get(address);
      if (region === undefined) continue;
      const sum = out.get(region) ?? { in: 0, out: 0 };
      sum.in += bytes.in;
      sum.out += bytes.out;
      out.set(region, sum);
    }
    return out;
  }

  /** Counted again when keys were added or moved, and at most every few seconds otherwise. */
  #countKeys(movesDone: number): Map<string, number> {
    const directory = this.#options.directory;
    const now = Date.now();
    const last = this.#keyCounts;
    if (
      last !== undefined &&
      last.size === directory.size &&
      last.done === movesDone &&
      now - last.at < KEY_COUNT_INTERVAL_MS
    ) {
      return last.byRegion;
    }
    const byRegion = new Map<string, number>();
    for (const [, region] of directory.entries()) byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
    this.#keyCounts = { at: now, size: directory.size, done: movesDone, byRegion };
    return byRegion;
  }

  whereIs(table: string, key: string): KeyLocation | KeyLookupFailure {
    return lookUpKey(table, key, this.#consoleContext());
  }

  /**
   * The home region is reachable: a pooled connection to its primary can be had and answers
   * `SELECT 1`. A pooled connection is not trusted unused, since it may have been idle since
   * before its server went away.
   */
  async ready(): Promise<boolean> {
    const { topology, pools } = this.#options;
    const home = topology.home;
    const timeoutMs = this.#options.readyTimeoutMs ?? 2000;
    let reachable = false;
    try {
      const lease = await pools.acquire(home.id, home.primary.user ?? "postgres");
      try {
        await lease.connection.simpleQuery("SELECT 1", { timeoutMs });
        reachable = true;
        lease.release();
      } catch (error) {
        lease.discard(`readiness check failed: ${String(error)}`);
      }
    } catch {
      reachable = false;
    }
    this.#health.observe(home.id, reachable);
    if (!reachable)
      this.#monitor?.reportFailure(home.primary, "the readiness check could not use a connection");
    return reachable;
  }

  // ------------------------------------------------------------------------------------------
  // Collectors (scrape time, snapshot, console)
  // ------------------------------------------------------------------------------------------

  regions(): RegionStatus[] {
    this.#readPools(this.#options.pools.stats());
    const monitor = this.#monitor;
    return monitor === undefined ? this.#health.regions() : probedRegions(monitor, this.#options.topology);
  }

  /**
   * One row per endpoint: its pools (one per database and role) summed, so each endpoint is one
   * series in /metrics.
   */
  pools(): PoolStatus[] {
    const byEndpoint = new Map<
      string,
      { region: string; idle: number; busy: number; waiting: number; max: number }
    >();
    for (const stats of this.#allPools()) {
      const endpoint = endpointName(stats.key);
      const row = byEndpoint.get(endpoint) ?? { region: stats.region, idle: 0, busy: 0, waiting: 0, max: 0 };
      row.idle += stats.idle;
      row.busy += stats.busy;
      row.waiting += stats.waiting;
      row.max += stats.max;
      byEndpoint.set(endpoint, row);
    }
    return [...byEndpoint].map(([endpoint, row]) => ({ endpoint, ...row }));
  }

  alerts(): Alert[] {
    const facts: Fact[] = [];
    const pools = this.#options.pools.stats();
    this.#readPools(pools);
    const monitor = this.#monitor;
    if (monitor !== undefined) facts.push(...probeFacts(monitor));
    else {
      for (const down of this.#health.down()) {
        facts.push({
          name: "backend_down",
          subject: down.endpoint,
          message: `the primary of ${down.region} cannot be reached: opening a connection to it failed`,
          since: down.since,
        });
      }
    }
    for (const stats of [...pools, ...(this.#options.replicaPools?.() ?? [])]) {
      if (stats.waiting > 0 && stats.total >= stats.max) {
        facts.push({
          name: "pool_saturated",
          subject: stats.name,
          message: `all ${stats.max} connections are in use and ${stats.waiting} checkout(s) wait`,
        });
      }
    }
    facts.push(...(this.#options.facts?.() ?? []));
    for (const txn of this.inDoubt.list()) {
      facts.push({
        name: "two_phase_commit_unacknowledged",
        subject: txn.gid,
        message: `${txn.decision} decided, not yet acknowledged by ${txn.pending.join(", ")}`,
        since: new Date(txn.decidedAt),
      });
    }
    return this.#alerts.current(facts);
  }

  cache(): CacheStatus {
    const stats = this.#options.analyzer.stats();
    return { hits: stats.hits, misses: stats.misses, entries: stats.size, capacity: stats.capacity };
  }

  clients(): ConsoleClient[] {
    return [...this.#clients]
      .filter((client) => client.state !== "closed")
      .map((client) => ({
        id: client.id,
        user: client.user,
        database: client.database,
        address: client.address,
        state: client.state,
        connectedAt: client.connectedAt,
        statements: client.statements,
      }));
  }

  /** Stops the admin port (its event streams end) and the health monitor started here. */
  async close(): Promise<void> {
    const admin = this.#admin;
    this.#admin = undefined;
    await admin?.close();
    if (this.#ownsMonitor) {
      this.#ownsMonitor = false;
      await this.#monitor?.stop();
    }
  }

  /** The primaries' pools, then the replicas'. */
  #allPools(): RegionPoolStats[] {
    return [...this.#options.pools.stats(), ...(this.#options.replicaPools?.() ?? [])];
  }

  /** The pools' connection counters; a primary they find unreachable is down for the monitor at once. */
  #readPools(pools: ReturnType<RegionPools["stats"]>): void {
    for (const endpoint of this.#health.update(pools)) {
      this.#monitor?.reportFailure(endpoint, "the proxy could not open a connection to it");
    }
  }

  #consoleContext(): ConsoleContext {
    const { config, topology, directory, analyzer, plan, pools } = this.#options;
    return {
      config,
      topology,
      directory,
      analyzer,
      plan,
      poolStats: () => pools.stats(),
      user: "admin",
      observed: this.console,
    };
  }
}
