import type { DirectoryStoreConfig, GeoConfig, MutableDirectory, ParamValue, Topology } from "@geo/core";
import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { ClaimGuard } from "@geo/txn";
import { DirectoryStore, type Location } from "../directory/directory-store.js";
import { RegionRunner } from "../directory/region-runner.js";
import { SharedDirectory } from "../directory/shared-directory.js";
import { keyPlacedByPeer } from "../directory/shared-errors.js";
import { PeerTakeover } from "../distributed/peer-takeover.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Leg } from "../executor/leg.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { claimFirstWrites, hintsOf } from "./first-write-claims.js";
import { HoldRegistry } from "./hold-registry.js";
import { runMoveCommand } from "./move-commands.js";
import { keyInSeveralRegions, lookupFailed } from "./move-errors.js";
import { KeyMover } from "./move-keys.js";
import { type MoveTwoPhase, openMoveTwoPhase } from "./move-two-phase.js";
import type { MovingSession } from "./moving-session.js";
import { sharedMoves } from "./shared-moves.js";
import { readsOnly, statementKeys } from "./statement-keys.js";

export interface MovesOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly log: Logger;
  /** The directory the router plans with: loaded from the regions' tables, changed by moves. */
  readonly directory: MutableDirectory;
  /** The regions reachable at start (default: all); the others join through `regionReachable`. */
  readonly regions?: readonly string[];
  /** The node's claim (it covers the moves' own prefix): moves decide and recover only under it. */
  readonly claim?: ClaimGuard;
  /**
   * Moves issued before this instant (wall-clock ms) by an earlier run are rolled back at once when
   * undecided, not after the grace period: `TxnService.abandonedSince()`, the node claim's proof.
   */
  readonly abandonedBefore?: number;
  /** Client sessions open now, reported in a shared directory's heartbeat. */
  readonly sessions?: () => number;
}

/** An admitted statement (or simple-query string): in flight until released. */
export interface Admission {
  /** First writes to record ahead of the statement, in the region it goes to. */
  readonly newKeys: readonly string[];
  /** The statement touches geo-partitioned tables: a shared directory's lease must hold. */
  readonly routedByKey: boolean;
  release(): void;
}

interface SessionAdmissions {
  current: Admission | null;
  /** Extended protocol: admitted at Bind, released once the batch's Sync is answered. */
  readonly pending: Admission[];
}

/**
 * The directory in PostgreSQL and the moves that change it: what the proxy starts when the
 * configuration has a `[directory_store]` section. Sessions call `admit` before routing a
 * statement (holds, keys located in every region) and `beforeSend` when its connection is chosen
 * (first writes recorded); the console's RELOCATE and REBALANCE run through `runCommand`.
 */
export class Moves {
  readonly holds = new HoldRegistry();
  readonly mover: KeyMover;
  private readonly sessions = new WeakMap<MovingSession, SessionAdmissions>();
  private readonly locating = new Map<string, Promise<Location>>();
  private opened: Promise<MoveTwoPhase> | null = null;
  /** With `shared = true`: this proxy's lease, its peers and the moves they announce. */
  shared: SharedDirectory | undefined;
  /** With `shared = true`: finishes what silent peers left prepared, every recovery interval. */
  takeover: PeerTakeover | undefined;

  private constructor(
    readonly store: DirectoryStore,
    private readonly runner: RegionRunner,
    private readonly options: MovesOptions,
    private readonly storeConfig: DirectoryStoreConfig,
  ) {
    this.mover = new KeyMover(
      store,
      runner,
      this.holds,
      async () => (await this.twoPhase()).coordinator,
      {
        lockTimeoutMs: storeConfig.lockTimeoutMs,
        recoveryIntervalMs: options.config.txn.recoveryIntervalMs,
        settled: () => this.settled(),
      },
      options.log,
    );
  }

  /** Opens the directory store (tables, guards, load); undefined without `[directory_store]`. */
  static async start(options: MovesOptions): Promise<Moves | undefined> {
    const storeConfig = options.config.directoryStore;
    if (storeConfig === undefined) return undefined;
    const runner = new RegionRunner(options.topology, options.pools);
    const store = new DirectoryStore(options.directory, storeConfig, options.topology, runner, options.log);
    const moves = new Moves(store, runner, options, storeConfig);
    // Moves a previous run left prepared are finished (or rolled back) before any new one, and
    // before the directory is loaded: a move committed now is then read as it left the keys.
    await moves.twoPhase();
    await store.open(options.regions);
    if (storeConfig.shared) await moves.share();
    return moves;
  }

  /** Joins the shared directory's peers: first visit to the authority, then one every poll_ms. */
  private async share(): Promise<void> {
    const { topology, log } = this.options;
    const authority = this.storeConfig.authority === "home" ? topology.home.id : this.storeConfig.authority;
    const shared = new SharedDirectory({
      store: this.storeConfig,
      node: this.options.config.server.node,
      home: topology.home.id,
      authority,
      regions: this.options.regions ?? topology.regionIds,
      everyRegion: topology.regionIds,
      runner: this.runner,
      directory: this.store.directory,
      holds: this.holds,
      sessions: this.options.sessions ?? (() => 0),
      // With a majority every region is told of a move; the home region's notice is the nearest.
      listen: (name) =>
        this.options.pools.connectClaim(authority === "majority" ? topology.home.id : authority, name),
      decisionLog:
        this.options.config.txn.decisionLog === "table"
          ? `table:${this.options.config.txn.logTable}`
          : "file",
      settled: () => this.settled(),
      log,
    });
    this.mover.share(sharedMoves(shared, this.storeConfig.leaseMs, log));
    this.shared = shared;
    await shared.open();
    const takeover = new PeerTakeover({
      config: this.options.config,
      topology,
      pools: this.options.pools,
      runner: this.runner,
      log,
      node: this.options.config.server.node,
      peers: () => shared.peers(),
      silentMs: 1.5 * this.storeConfig.leaseMs,
      withdrawMovesOf: async (node) => {
        const answers = await shared.quorum.run(shared.tables.withdrawAllOfSql(node));
        return new Set([...answers.values()].flatMap((answer) => answer.rows.map((row) => row["id"]))).size;
      },
    });
    this.takeover = takeover;
    takeover.start();
  }

  /** Settled: a recovery pass begun now scanned every region and left no prepared move of this node undecided. */
  private async settled(): Promise<boolean> {
    const report = await (await this.twoPhase()).recovery.runFresh();
    return report.failures.length === 0 && report.waiting.length === 0;
  }

  get directory(): DirectoryStore["directory"] {
    return this.store.directory;
  }

  /** Opened once: the start-up call, every move's coordinator and `regionReachable` share it. */
  private twoPhase(): Promise<MoveTwoPhase> {
    this.opened ??= openMoveTwoPhase(this.runner, this.options);
    return this.opened;
  }

  /**
   * A region that was down at start answers: its directory table is prepared and loaded, and the
   * moves a previous run left prepared there are finished or rolled back now rather than at the
   * next recovery interval. Rejects (to be retried) when the region fails again meanwhile.
   */
  async regionReachable(region: string): Promise<void> {
    await this.store.openRegion(region);
    const opened = await this.twoPhase();
    const report = await opened.recovery.runOnce();
    const failed = report.failures.find((failure) => failure.region === region);
    if (failed !== undefined) throw failed.error;
  }

  async close(): Promise<void> {
    await this.takeover?.stop();
    await this.shared?.close();
    const opened = await this.opened?.catch(() => null);
    if (opened == null) return;
    await opened.recovery.stop();
    await opened.log.close().catch(() => undefined);
  }

  // ------------------------------------------------------------------------------------------
  // Statements
  // ------------------------------------------------------------------------------------------

  /**
   * Before a statement (or every statement of a simple-query string) is routed: keys read with
   * no directory entry are looked for in every region (found in one: recorded there; in two:
   * refused), then the statement waits while a move holds its keys. Resolves with the admission
   * to release once the statement's answer is complete, or the error to send instead.
   */
  async admit(
    session: MovingSession,
    analyses: readonly Analysis[],
    params?: readonly ParamValue[],
  ): Promise<Admission | PgError> {
    const topology = this.options.topology;
    const directory = this.store.directory;
    const canonical = (key: string): string => this.store.canonical(key);
    const touched = analyses.map((analysis) =>
      statementKeys(analysis, topology, directory, canonical, params),
    );
    const any = touched.some((keys) => keys.touch.kind === "any");
    const keys = touched.flatMap((k) => (k.touch.kind === "keys" ? k.touch.keys : []));
    const touch = any
      ? ({ kind: "any" } as const)
      : keys.length === 0
        ? ({ kind: "none" } as const)
        : ({ kind: "keys", keys } as const);
    // Past its lease a shared directory's proxy may route on entries another proxy changed.
    const lapsed = touch.kind === "none" ? null : (this.shared?.refusal() ?? null);
    if (lapsed !== null) return lapsed;
    const inWork = session.txn !== null && session.txn.legs.size > 0;
    const ticket = await this.holds.admit(touch, this.storeConfig.holdMs, inWork, analyses.every(readsOnly));
    if (ticket instanceof PgError) return ticket;
    // Looked for once admitted: no move of these keys can start before the ticket is released,
    // so what the probe finds is still true when the statement runs.
    // With a region's directory table unread (down at start), a first write's key may live there.
    const complete = this.store.complete;
    for (const keys of touched) {
      for (const key of complete ? keys.unlisted : [...keys.unlisted, ...keys.newKeys]) {
        if (directory.lookup(key) !== undefined) continue;
        let location: Location;
        try {
          location = await this.locate(key);
        } catch (error) {
          ticket.release();
          return error instanceof PgError ? error : lookupFailed(key, error);
        }
        if (location.kind === "several") {
          ticket.release();
          return keyInSeveralRegions(key, location.regions);
        }
      }
    }
    const firstWrites = [...new Set(touched.flatMap((k) => k.newKeys))].filter(
      (key) => directory.lookup(key) === undefined,
    );
    if (this.shared !== undefined && firstWrites.length > 0) {
      const hints = hintsOf(touched, analyses);
      const claimed = await claimFirstWrites(
        this.shared,
        this.options.topology,
        directory,
        firstWrites,
        hints,
      );
      if (claimed !== null) {
        ticket.release();
        return claimed;
      }
    }
    // Every await above (a hold, a lookup, a claim) may have outlasted the lease: checked again
    // as the statement is let go, so nothing is routed on entries older than lease_ms.
    const lapsedSince = touch.kind === "none" ? null : (this.shared?.refusal() ?? null);
    if (lapsedSince !== null) {
      ticket.release();
      return lapsedSince;
    }
    const newKeys = this.storeConfig.recordNewKeys ? firstWrites : [];
    const state = this.stateOf(session);
    const admission: Admission = {
      newKeys,
      routedByKey: touch.kind !== "none",
      release: () => {
        ticket.release();
        if (state.current === admission) state.current = null;
      },
    };
    state.current = admission;
    return admission;
  }

  /**
   * A COPY's new keys, claimed for the region their rows went to; a key another proxy placed
   * elsewhere meanwhile fails the COPY (40001) before anything commits.
   */
  async claimCopied(keys: readonly string[], region: string): Promise<PgError | null> {
    if (this.shared === undefined || keys.length === 0) return null;
    const placed = await this.shared.claim(keys, region, true);
    if (placed instanceof PgError) return placed;
    for (const key of keys) {
      const where = placed.get(key);
      if (where !== undefined && where !== region) return keyPlacedByPeer(key, where, region);
    }
    return null;
  }

  /**
   * Extended protocol, at Execute: a portal admitted at Bind is refused (57P03) once the shared
   * directory's lease has lapsed since, as a statement admitted now would be. Null otherwise.
   */
  refusalAtExecute(session: MovingSession): PgError | null {
    if (this.shared === undefined) return null;
    const pending = this.sessions.get(session)?.pending;
    if (pending === undefined || !pending.some((admission) => admission.routedByKey)) return null;
    return this.shared.refusal();
  }

  /** Extended protocol: the admission lives until the batch's Sync. */
  admitted(session: MovingSession, admission: Admission): void {
    this.stateOf(session).pending.push(admission);
  }

  /** The client's Sync is queued: the batch's statements are done once `answered` resolves. */
  afterSync(session: MovingSession, answered: Promise<void>): void {
    const state = this.sessions.get(session);
    if (state === undefined || state.pending.length === 0) return;
    const done = state.pending.splice(0);
    void answered.finally(() => {
      for (const admission of done) admission.release();
    });
  }

  /**
   * The statement's connection is chosen: a first write's keys are recorded ahead of it on the
   * same connection, written in the same flight (no round trip of its own). In a transaction
   * block, or in an extended-protocol batch, the entry commits or rolls back with the write; a
   * lone simple query's entry commits on its own just before it, and names the region the key
   * would be created in anyway.
   */
  beforeSend(session: MovingSession, leg: Leg, readOnly: boolean, mode: StatementMode): void {
    const admission = this.sessions.get(session)?.current;
    if (admission == null || readOnly || admission.newKeys.length === 0) return;
    const keys = admission.newKeys;
    const region = leg.region;
    const directory = this.store.directory;
    session.writeOnLeg(leg, this.store.recordSql(keys, region), "quiet", mode.extended, (unit) => {
      if (unit.failed) return;
      for (const key of keys) if (directory.lookup(key) === undefined) directory.assign(key, region);
    });
  }

  private stateOf(session: MovingSession): SessionAdmissions {
    let state = this.sessions.get(session);
    if (state === undefined) {
      state = { current: null, pending: [] };
      this.sessions.set(session, state);
    }
    return state;
  }

  /** Looks for a key in every region once, however many statements ask at the same time. */
  private locate(key: string): Promise<Location> {
    let running = this.locating.get(key);
    if (running === undefined) {
      running = this.store
        .locate(key)
        .then(async (location) => {
          if (location.kind === "one") await this.store.remember(key, location.region);
          return location;
        })
        .finally(() => this.locating.delete(key));
      this.locating.set(key, running);
    }
    return running;
  }

  // ------------------------------------------------------------------------------------------
  // RELOCATE and REBALANCE
  // ------------------------------------------------------------------------------------------

  /**
   * Runs RELOCATE or REBALANCE for a simple query: answers (rows, progress notices, errors) go
   * through the session's relay in order. False when `analysis` is neither.
   */
  runCommand(session: MovingSession, analysis: Analysis, mode: StatementMode): Promise<boolean> {
    const { config, topology } = this.options;
    const context = {
      config,
      topology,
      store: this.store,
      runner: this.runner,
      mover: this.mover,
      batch: this.storeConfig.batch,
    };
    return runMoveCommand(context, session, analysis, mode);
  }
}
