import type { GeoConfig, Topology } from "@geo/core";
import {
  type ClaimGuard,
  Coordinator,
  type DecisionLog,
  GidFactory,
  NodeClaim,
  Recovery,
  type RecoveryReport,
  TableDecisionLog,
} from "@geo/txn";
import type { Peer } from "../directory/peer-view.js";
import type { RegionRunner } from "../directory/region-runner.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { MOVE_DECISIONS, runnerConnector, toResult } from "../moves/move-two-phase.js";
import { ownDecisions } from "./own-decisions.js";
import { movePrefixFor, prefixFor, runOn } from "./txn-service.js";

export interface PeerTakeoverOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly runner: RegionRunner;
  readonly log: Logger;
  /** This proxy's node name: never taken over by itself. */
  readonly node: string;
  /** The peers as the shared directory's last visit found them. */
  readonly peers: () => readonly Peer[];
  /** A peer silent for longer than this is looked at (1.5 x lease_ms: by its own clock its lease ran out). */
  readonly silentMs: number;
  /**
   * Withdraws the moves `node` announced, once its prepared moves are settled under its claim:
   * the peers stop holding their keys without waiting for it to restart. Resolves with how many.
   */
  readonly withdrawMovesOf: (node: string) => Promise<number>;
}

/** What one takeover of a silent peer finished. */
export interface TakeoverReport {
  readonly node: string;
  readonly committed: number;
  readonly rolledBack: number;
  /** Its announced moves withdrawn (once its prepared moves were settled). */
  readonly withdrawn: number;
  /** False when a region could not be scanned or acted on: the peer is looked at again. */
  readonly complete: boolean;
}

/**
 * Finishes what a proxy that stopped heartbeating left prepared, so its prepared transactions do
 * not hold their rows' locks until it restarts. A peer is taken over only once its node claim can
 * be taken in every region: a live process (even a frozen one) keeps its claim sessions open, and
 * a process without its claim can decide nothing, so nothing taken over here can still be decided
 * by its owner. Under that claim it is recovered as a restarting proxy would recover itself: what
 * its log decided is committed, what it never decided is rolled back (the abort recorded first),
 * for its statements (when `decision_log = "table"`, the table in its home region) and its moves;
 * its announced moves are then withdrawn, so the peers let their keys go. Then the claim is let
 * go, so the peer can start again.
 */
export class PeerTakeover {
  readonly #options: PeerTakeoverOptions;
  /**
   * Peers taken over with nothing left, by node: the start they were taken over in, and when. Looked
   * at again after a while all the same: a PREPARE still running when the peer died ends later.
   */
  readonly #done = new Map<string, { readonly startedAt: string; readonly at: number }>();
  #sweeping: Promise<TakeoverReport[]> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PeerTakeoverOptions) {
    this.#options = options;
  }

  /** Looks at every silent peer once; concurrent calls share the sweep under way. */
  sweep(): Promise<TakeoverReport[]> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  /** Sweeps every recovery interval from now on. */
  start(): void {
    this.#timer ??= setInterval(() => void this.sweep(), this.#options.config.txn.recoveryIntervalMs);
    this.#timer.unref();
  }

  /** No more sweeps; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping?.catch(() => undefined);
  }

  async #sweep(): Promise<TakeoverReport[]> {
    const { peers, node, silentMs, log } = this.#options;
    const reports: TakeoverReport[] = [];
    for (const peer of peers()) {
      if (peer.node === node || peer.heartbeatAgeMs <= silentMs) continue;
      const done = this.#done.get(peer.node);
      const again = 10 * this.#options.config.txn.recoveryIntervalMs;
      if (done !== undefined && done.startedAt === peer.startedAt && Date.now() - done.at < again) continue;
      try {
        const report = await this.#takeOver(peer);
        if (report === null) continue;
        reports.push(report);
        if (report.complete) this.#done.set(peer.node, { startedAt: peer.startedAt, at: Date.now() });
        if (report.committed + report.rolledBack + report.withdrawn > 0 || !report.complete)
          log.info(report, "finished what a silent proxy left prepared");
      } catch (error) {
        log.warn(
          { peer: peer.node, err: error },
          "could not take over a silent proxy's prepared transactions",
        );
      }
    }
    return reports;
  }

  /** Null when the peer's claim is held somewhere: it is alive, or cannot be proved gone. */
  async #takeOver(peer: Peer): Promise<TakeoverReport | null> {
    const { config, topology, pools, log } = this.#options;
    const regions = topology.regionIds;
    const claim = new NodeClaim({
      node: peer.node,
      prefixes: [prefixFor(peer.node), movePrefixFor(peer.node)],
      connector: {
        connect: async (region) => {
          const connection = await pools.connectClaim(
            region,
            `geoproxy node ${peer.node} taken over by ${this.#options.node}`.slice(0, 63),
          );
          return {
            ended: connection.closed,
            query: (sql) => runOn(connection, sql),
            abandon: () => connection.destroy(),
            close: () => connection.close(),
          };
        },
      },
      stepTimeoutMs: config.txn.stepTimeoutMs,
      siteOf: (region) => {
        const key = pools.keyOf(region, topology.region(region)?.primary.user ?? "postgres");
        return `${key.host}:${key.port}/${key.database}`;
      },
    });
    try {
      const taken = await claim.takeAll(regions);
      if (taken.some((result) => result.state !== "held")) return null;
      // Every process of the peer let its claim go before now: what it left undecided stays so.
      const claimedAt = Date.now();
      const guard: ClaimGuard = {
        held: (region) => claim.held(region),
        refusal: (list) => claim.refusal(list),
      };
      // Its logs are in its own home region: a home this topology does not know cannot be read.
      if (topology.region(peer.home) === undefined) return null;
      const home = peer.home;
      const logs: [string, string][] = [[movePrefixFor(peer.node), MOVE_DECISIONS]];
      // Only a table log the peer itself named: read elsewhere (or with no log at all), its
      // decided transactions would look undecided and be rolled back where they had committed.
      const named = peer.decisionLog?.startsWith("table:") === true ? peer.decisionLog.slice(6) : undefined;
      if (named !== undefined) logs.push([prefixFor(peer.node), named]);
      else
        log.debug(
          { peer: peer.node, decisionLog: peer.decisionLog ?? null },
          "a silent peer's statements are finished only when it restarts: its decision log is not a table it named",
        );
      let committed = 0;
      let rolledBack = 0;
      let complete = true;
      let withdrawn = 0;
      for (const [prefix, table] of logs) {
        const report = await this.#recover(prefix, table, home, guard, claimedAt);
        committed += report.committed.length;
        rolledBack += report.rolledBack.length;
        const settled = report.failures.length === 0 && report.waiting.length === 0;
        if (!settled) complete = false;
        // Its moves settled while its claim is held here: none of them can commit any more.
        if (settled && prefix === movePrefixFor(peer.node))
          withdrawn = await this.#options.withdrawMovesOf(peer.node);
      }
      return { node: peer.node, committed, rolledBack, withdrawn, complete };
    } finally {
      await claim.close();
    }
  }

  async #recover(
    prefix: string,
    table: string,
    home: string,
    claim: ClaimGuard,
    abandonedBefore: number,
  ): Promise<RecoveryReport> {
    const { config, runner, topology } = this.#options;
    const shared = await TableDecisionLog.open({
      executor: { query: async (sql) => toResult(await runner.run(home, sql)) },
      table,
    });
    const log: DecisionLog = ownDecisions(shared, new GidFactory(prefix));
    const connector = runnerConnector(runner);
    const coordinator = new Coordinator({
      prefix,
      log,
      connector,
      claim,
      stepTimeoutMs: config.txn.stepTimeoutMs,
    });
    const recovery = new Recovery({
      coordinator,
      log,
      connector,
      regions: topology.regionIds,
      graceMs: config.txn.recoveryGraceMs,
      stepTimeoutMs: config.txn.stepTimeoutMs,
      claim,
      abandonedBefore,
    });
    return recovery.runOnce();
  }
}
