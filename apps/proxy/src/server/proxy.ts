import { createServer, type Server, type Socket } from "node:net";
import {
  DEFAULTS,
  type Directory,
  type GeoConfig,
  MemoryDirectory,
  schemaInfoFor,
  Topology,
} from "@geo/core";
import type { ConnectFunction } from "@geo/pool";
import { encodeErrorResponse } from "@geo/proto";
import { Analyzer } from "@geo/sql";
import {
  prepareSecurity,
  type Security,
  SecurityConfigError,
  type SecurityOptions,
} from "../auth/security.js";
import { proxyConsoleReader } from "../console/console-reader.js";
import type { ConsoleContext } from "../console/context.js";
import { openStoreClaim } from "../directory/open-store-claim.js";
import { RegionRunner } from "../directory/region-runner.js";
import { TxnService } from "../distributed/txn-service.js";
import { shuttingDown, tooManyClients } from "../errors/catalog.js";
import { RegionPools } from "../executor/region-pools.js";
import { createLogger, type Logger, type LogLevel } from "../log.js";
import type { Moves } from "../moves/moves.js";
import { Observability } from "../observability/observability.js";
import { ReplicaService } from "../replicas/replica-service.js";
import { Router } from "../routing/router.js";
import { Session } from "../session/session.js";
import { CancelRegistry, type CancelWorkers } from "./cancel-registry.js";
import { CatalogReads } from "./catalog-reads.js";
import { catchUpRegion } from "./catch-up-region.js";
import { LateRegions } from "./late-regions.js";
import { refuseSocket } from "./refuse-socket.js";
import { RegionCollations } from "./region-collations.js";
import type { ProxyRuntime } from "./runtime.js";
import { startMoves } from "./start-moves.js";
import { probeRegions, startRefusal } from "./start-probes.js";
import { StartupError } from "./startup-error.js";

export interface StartProxyOptions {
  readonly config: GeoConfig;
  /** Where each key lives; an empty directory when absent (every key is created at home). */
  readonly directory?: Directory;
  readonly logger?: Logger;
  readonly logLevel?: LogLevel;
  /** Overrides `server.host` / `server.port` (tests listen on port 0). */
  readonly host?: string;
  readonly port?: number;
  /** How long transactions may take to finish on shutdown before their clients are cut off. */
  readonly shutdownTimeoutMs?: number;
  /** Replaces how backend connections are opened (tests). */
  readonly connect?: ConnectFunction;
  /** Clock and delays of authentication (tests). */
  readonly security?: Omit<SecurityOptions, "connect">;
  /**
   * This process is one worker of `geoproxy serve --workers`: its cancel keys name it, and it logs
   * `worker listening` (the primary logs `geoproxy listening` once every worker listens).
   */
  readonly worker?: CancelWorkers;
}

export interface RunningProxy {
  readonly host: string;
  readonly port: number;
  readonly runtime: ProxyRuntime;
  /** Regions whose primary has not answered since the proxy started without them, by id. */
  readonly lateRegions: readonly string[];
  /** Client sessions open now. */
  readonly sessionCount: number;
  /**
   * Graceful shutdown: stop accepting, close idle sessions, let open transactions finish up to
   * the timeout, then close everything and the pools.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith("127.");
}

/**
 * Starts geoproxy: checks the configuration's safety rules, opens a connection to every region's
 * primary, then listens. The home region must answer (see `startRefusal`); any other region that
 * does not is logged, shown down, and picked up in the background when it answers, its missed
 * start-up work (directory catch-up, recovery) run then. Its statements fail at once meanwhile.
 *
 * @example
 * ```ts
 * const proxy = await startProxy({ config: loadConfig("geoproxy.toml"), port: 0 });
 * // psql -h 127.0.0.1 -p ${proxy.port}
 * await proxy.close();
 * ```
 */
export async function startProxy(options: StartProxyOptions): Promise<RunningProxy> {
  const config = options.config;
  const log = options.logger ?? createLogger(options.logLevel ?? "info");
  const host = options.host ?? config.server.host;
  const port = options.port ?? config.server.port;
  if (config.auth.method === "trust" && !isLoopback(host) && !config.server.trustBeyondLoopback) {
    throw new StartupError([
      `${config.file}: refusing to listen on ${host} with trust authentication: anyone who can reach it could connect; listen on 127.0.0.1, or set server.trust_beyond_loopback = true if that is intended`,
    ]);
  }
  const topology = Topology.fromConfig(config);
  const directory = options.directory ?? new MemoryDirectory();
  const analyzer = await Analyzer.create({
    ...schemaInfoFor(topology),
    cacheSize: config.server.analysisCacheSize,
    console: proxyConsoleReader,
  });
  const router = new Router(
    analyzer,
    topology,
    directory,
    config.gather,
    config.directoryStore === undefined ? "placed" : "anywhere",
  );
  let security: Security;
  try {
    security = prepareSecurity(config, { ...options.security, connect: options.connect });
  } catch (error) {
    throw error instanceof SecurityConfigError ? new StartupError(error.lines) : error;
  }
  // Every region's database default collation, read as its connections open (docs/scatter-gather.md).
  const collations = new RegionCollations(topology, log);
  const pools = new RegionPools(topology, config, collations.watch(security.connect));
  const probes = await probeRegions(topology, pools, log);
  const refusal = startRefusal(config, probes);
  if (refusal !== null) {
    await pools.close(0);
    throw new StartupError(refusal);
  }
  const down = probes.filter((probe) => probe.error !== null);
  for (const probe of down) {
    log.warn(
      { region: probe.region, backend: probe.endpoint, err: probe.error },
      `region ${probe.region} is unreachable at start: its statements fail until it answers; tried again in the background`,
    );
  }
  const homeParameters = probes.find((probe) => probe.home)?.parameters ?? new Map<string, string>();
  const reachable = probes.filter((probe) => probe.error === null).map((probe) => probe.region);
  // With replicas listed, one monitor probes every backend before the first client is served, and
  // the admin port shows what it probes (no second set of probes).
  const catalog = await CatalogReads.atStart(router, pools, log, reachable, config.pool.connectTimeoutMs);
  const replicas = ReplicaService.create(config, topology, security.connect);
  await replicas?.start();
  let txnRef: TxnService | undefined;
  let movesRef: Moves | undefined;
  const observability = await Observability.start({
    config,
    topology,
    directory,
    analyzer,
    pools,
    log,
    plan: (analysis, params) => router.plan(analysis, params),
    ...(replicas === undefined
      ? {}
      : { health: replicas.health, replicaPools: () => replicas.pools.stats() }),
    downAtStart: down.map((probe) => ({ region: probe.region, reason: probe.error ?? "unreachable" })),
    facts: () => [
      ...collations.facts(),
      ...catalog.facts(),
      ...(txnRef?.claimFacts() ?? []),
      ...(movesRef?.shared?.facts() ?? []),
    ],
    analysisOf: (route) => router.analysisOf(route),
    traffic: security.traffic,
    schemaDrift: () => catalog.schemaDrift.report(),
  }).catch(async (error: unknown) => {
    await replicas?.close(0);
    await pools.close(0);
    throw error;
  });

  // A backend the health monitor marks down has its waiting connections broken at once.
  security.watchHealth(observability.health);

  const txn = new TxnService({ config, topology, pools, log, ledger: observability.inDoubt });
  txnRef = txn;
  // Before anything is recovered, loaded or served: another live proxy with this node's gid prefix
  // would roll back what this one prepares; another over its geo-partitioned tables would route on
  // a directory that can disagree with this one's (docs/directory.md, "One proxy per directory store").
  const claimed = await txn.claimNode(reachable);
  const directoryClaim =
    claimed.length > 0
      ? { refused: [] }
      : await openStoreClaim({ config, topology, pools, log, regions: reachable });
  if (claimed.length > 0 || directoryClaim.refused.length > 0) {
    await txn.close();
    await observability.close();
    await replicas?.close(0);
    await pools.close(0);
    throw new StartupError([...claimed, ...directoryClaim.refused]);
  }
  const storeClaim = directoryClaim.claim;
  // Without the log only writes across regions are unavailable (55000); opening is retried on each.
  await txn
    .start()
    .catch((error: unknown) =>
      log.error(
        { err: error },
        "cannot open the decision log: writes across regions are unavailable until it opens",
      ),
    );

  const sessions = new Set<Session>();
  const moves = await startMoves(
    config,
    topology,
    pools,
    log,
    directory,
    reachable,
    txn,
    () => sessions.size,
  ).catch(async (error: unknown) => {
    await storeClaim?.close();
    await txn.close();
    await observability.close();
    await replicas?.close(0);
    await pools.close(0);
    throw error;
  });
  movesRef = moves;
  if (moves !== undefined) {
    observability.watchMoves(() => moves.mover.progress());
    observability.watchSharedDirectory(moves);
  }

  const late = new LateRegions({
    topology,
    pools,
    log,
    intervalMs: config.routing.healthIntervalMs ?? DEFAULTS.routing.healthIntervalMs,
    onReachable: (region) =>
      catchUpRegion(region, {
        txn,
        claim: storeClaim,
        moves,
        sequenceIds: catalog.sequenceIds,
        timeoutMs: config.pool.connectTimeoutMs,
      }),
  });
  late.start(down.map((probe) => probe.region));

  let sequence = 0;
  let closing = false;
  const runtime: ProxyRuntime = {
    config,
    router,
    pools,
    log,
    cancels: new CancelRegistry(options.worker),
    homeParameters,
    collations,
    schemaDrift: catalog.schemaDrift,
    restripe: {
      config,
      topology,
      runner: new RegionRunner(topology, pools),
      sequenceIds: catalog.sequenceIds,
      timeoutMs: config.pool.connectTimeoutMs,
    },
    nextSequence: () => ++sequence,
    consoleContext: (user: string, clientAddress?: string): ConsoleContext => ({
      config,
      topology,
      directory,
      analyzer,
      plan: (analysis, params) => router.plan(analysis, params),
      poolStats: () => [...pools.stats(), ...(replicas?.pools.stats() ?? [])],
      user,
      observed: observability.console,
      schema: () => catalog.schemaDrift.report(),
      replicas,
      clientAddress,
      peers: moves?.shared,
    }),
    observability,
    txn,
    moves,
    replicas,
    fastLane: { statements: 0 },
    get shuttingDown() {
      return closing;
    },
  };

  const door = security.openDoor({
    acquireHome: () => pools.acquire(topology.home.id, topology.home.primary.user ?? "postgres"),
    homeRegion: topology.home.id,
    cancels: runtime.cancels,
    log,
  });
  const server: Server = createServer((socket: Socket) => {
    if (closing) {
      refuseSocket(socket, encodeErrorResponse(shuttingDown()));
      return;
    }
    if (sessions.size + door.pending >= config.server.maxConnections) {
      refuseSocket(socket, encodeErrorResponse(tooManyClients(config.server.maxConnections)));
      return;
    }
    // TLS, cancel requests and authentication happen at the door; a session starts logged in.
    void door.admit(socket).then((admitted) => {
      if (admitted === null) return;
      if (closing) {
        refuseSocket(admitted.socket, encodeErrorResponse(shuttingDown()));
        return;
      }
      const session = new Session(admitted.socket, runtime);
      sessions.add(session);
      void session.closed.then(() => sessions.delete(session));
      admitted.socket.resume();
    });
  });
  server.on("error", (error) => log.error({ err: error }, "listener error"));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      void late.close();
      void storeClaim?.close();
      void pools.close(0);
      void observability.close();
      void replicas?.close(0);
      reject(new StartupError([`cannot listen on ${host}:${port}: ${error.message}`]));
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  catalog.start(config.pool.connectTimeoutMs, config.server.schemaCheckIntervalMs);
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  log.info(
    { host, port: boundPort, regions: topology.regionIds },
    options.worker === undefined ? "geoproxy listening" : "worker listening",
  );

  let closed: Promise<void> | null = null;
  return {
    host,
    port: boundPort,
    runtime,
    get lateRegions() {
      return late.pending;
    },
    get sessionCount() {
      return sessions.size;
    },
    close(closeOptions = {}) {
      closed ??= (async () => {
        closing = true;
        door.close();
        const timeoutMs = closeOptions.timeoutMs ?? options.shutdownTimeoutMs ?? 10_000;
        log.info({ sessions: sessions.size, timeoutMs }, "shutting down");
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        const deadline = Date.now() + timeoutMs;
        while (sessions.size > 0 && Date.now() < deadline) {
          for (const session of sessions) if (session.idle) session.fatal(shuttingDown());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        for (const session of sessions) session.fatal(shuttingDown());
        await Promise.race([Promise.all([...sessions].map((s) => s.closed)), delay(1000)]);
        for (const session of sessions) session.socket.destroy();
        await stopped;
        await late.close();
        await moves?.close();
        await catalog.close();
        await storeClaim?.close();
        await txn.close();
        await observability.close();
        await replicas?.close(1000);
        await pools.close(1000);
        await security.close();
        log.info("geoproxy stopped");
      })();
      return closed;
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
