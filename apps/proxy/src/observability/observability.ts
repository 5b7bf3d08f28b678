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
  type SharedDirectoryStatus,
  type TransactionOutcome,
} from "@geo/admin";
import type { HealthMonitor } from "@geo/pool";
import type { ConsoleClient, ConsoleContext, ObservedState } from "../console/context.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { MoveProgress } from "../moves/move-keys.js";
import type { SchemaDriftReport } from "../server/schema-drift-report.js";
import { startAdminPort } from "./admin-port.js";
import { AlertBook } from "./alert-book.js";
import { alertFacts } from "./alert-facts.js";
import { probedRegions, probeMonitor } from "./backend-probes.js";
import { EndpointHealth } from "./endpoint-health.js";
import { homeAnswers } from "./home-readiness.js";
import { InDoubtLedger } from "./in-doubt-ledger.js";
import { lookUpKey } from "./key-lookup.js";
import type { ObservabilityOptions } from "./observability-options.js";
import type { ObservableSession } from "./observable-session.js";
import { ObservedClient } from "./observed-client.js";
import { PlacementStatusBook } from "./placement-status.js";
import { poolRows } from "./pool-rows.js";
import type { RegionPoolStats } from "./region-pool-stats.js";
import { RouteBook } from "./route-book.js";
import { schemaDriftStatus } from "./schema-drift-status.js";
import { type SharedStatusSource, sharedDirectoryStatus } from "./shared-status.js";

export type { ObservabilityOptions } from "./observability-options.js";

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
  #shared: SharedStatusSource | undefined;
  readonly #placement: PlacementStatusBook;
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
    this.#placement = new PlacementStatusBook(topology, options.directory, options.traffic);
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
      regionBytes: () =>
        [...this.#placement.bytesByRegion()].map(([region, bytes]) => ({ region, ...bytes })),
      schemaDrift: () => this.schemaDrift(),
      shared: () => this.shared(),
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

  /** Where a shared directory's lease, peers and held moves are read (the proxy's `Moves`), once it started. */
  watchSharedDirectory(source: SharedStatusSource): void {
    this.#shared = source;
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
    const shared = this.shared();
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
      ...(shared === undefined ? {} : { shared }),
    };
  }

  /** The shared directory's lease, peers and held moves; undefined when the directory is not shared. */
  shared(): SharedDirectoryStatus | undefined {
    const source = this.#shared;
    return source === undefined ? undefined : sharedDirectoryStatus(source, this.#options.topology.home.id);
  }

  /** The tables whose copies differ between regions, at the latest schema check. */
  schemaDrift(): SchemaDriftStatus {
    const report = this.#options.schemaDrift?.() ?? NOT_CHECKED;
    if (this.#drift?.report !== report) this.#drift = { report, status: schemaDriftStatus(report) };
    return this.#drift.status;
  }

  /** Keys per region from the directory, rows moved since start, moves running. */
  placement(): PlacementStatus {
    return this.#placement.status(this.#moves?.());
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
    const reachable = await homeAnswers(pools, topology, this.#options.readyTimeoutMs ?? 2000);
    this.#health.observe(topology.home.id, reachable);
    if (!reachable)
      this.#monitor?.reportFailure(topology.home.primary, "the readiness check could not use a connection");
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
    return poolRows(this.#allPools());
  }

  alerts(): Alert[] {
    const pools = this.#options.pools.stats();
    this.#readPools(pools);
    const facts = alertFacts({
      monitor: this.#monitor,
      health: this.#health,
      pools,
      replicaPools: () => this.#options.replicaPools?.() ?? [],
      facts: () => this.#options.facts?.() ?? [],
      inDoubt: this.inDoubt,
    });
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
