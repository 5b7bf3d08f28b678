// Long file: TxnService is one owner of the proxy's two-phase commit machinery (the node's claim,
// the decision log, the coordinator, recovery sweeps and the observer and connectors they use),
// whose parts share its private state: the log opened once and lazily, the claim's timer, and the
// closed flag that claims, sweeps and opening check. Splitting it by method would expose that
// state to several files; the helpers that need none of it (prefixes, runOn) are small.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { GeoConfig, Topology } from "@geo/core";
import { PgError, SqlState } from "@geo/proto";
import {
  type ClaimChange,
  type ClaimConnection,
  type ClaimGuard,
  type ClaimResult,
  Coordinator,
  type DecisionLog,
  FileDecisionLog,
  GidFactory,
  NodeClaim,
  type ParticipantConnector,
  type QueryResult,
  Recovery,
  type RecoveryConnection,
  type RecoveryReport,
  stepTimedOut,
  TableDecisionLog,
  type TxnObserver,
} from "@geo/txn";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { Fact } from "../observability/alert-book.js";
import type { InDoubtLedger } from "../observability/in-doubt-ledger.js";
import { ownDecisions } from "./own-decisions.js";
import { txnErrorToPg } from "./txn-errors.js";

export interface TxnServiceOptions {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly pools: RegionPools;
  readonly log: Logger;
  /** Told of each decision and acknowledgement, for SHOW IN DOUBT and the alert. */
  readonly ledger?: InDoubtLedger;
}

/** `geo_` and the node name, made a valid transaction id prefix. */
export function prefixFor(node: string): string {
  return `geo_${node.replace(/[^A-Za-z0-9_]/g, "_")}`.slice(0, 100);
}

/** The prefix of the node's moves (`[directory_store]`), apart from its statements' own. */
export function movePrefixFor(node: string): string {
  return `${prefixFor(node).slice(0, 96)}_mv`;
}

/** How the node claim's sessions show in pg_stat_activity, so that a refused proxy can name its holder. */
export function claimApplicationName(node: string): string {
  return `geoproxy node ${node}`.slice(0, 63);
}

/**
 * The proxy's two-phase commit machinery: the decision log named by `[txn]`, the coordinator and
 * recovery. The file log is opened at start when it exists (a previous run may have left
 * transactions to finish) and otherwise before the first two-phase commit, so a proxy that never
 * writes across regions never creates it; the table log is opened at start. Either way the first
 * recovery pass runs before the coordinator is handed out, so before the proxy serves when the log
 * opens at start; it rolls back at once what an earlier run left undecided (proved gone by the file
 * log's lock, or for the table log by the node claim: abandonedSince).
 */
export class TxnService {
  readonly prefix: string;
  /**
   * The claim on this node's prefixes in every region (packages/txn README, "One coordinator per
   * prefix"): taken at start before anything is recovered, checked at every recovery interval, and
   * required by the coordinator and recovery in each region they act in.
   */
  readonly claim: NodeClaim;
  /**
   * When `claimNode` took the claim (wall-clock ms): every earlier process of this node had let it
   * go in each region that answered, so none of them can still decide a transaction there.
   */
  private claimedAt: number | undefined;
  private claimTimer: NodeJS.Timeout | undefined;
  private readonly options: TxnServiceOptions;
  private opening: Promise<{ coordinator: Coordinator; recovery: Recovery }> | null = null;
  private opened: { coordinator: Coordinator; recovery: Recovery; log: DecisionLog } | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private startupReport: RecoveryReport | null = null;
  private readonly regions: readonly string[];

  constructor(options: TxnServiceOptions) {
    this.options = options;
    const node = options.config.server.node;
    this.prefix = prefixFor(node);
    this.regions = options.topology.regionIds;
    this.claim = new NodeClaim({
      node,
      prefixes: [this.prefix, movePrefixFor(node)],
      connector: { connect: (region) => this.claimConnection(region) },
      stepTimeoutMs: options.config.txn.stepTimeoutMs,
      onChange: (change) => this.claimChanged(change),
      // Regions served by one database (a demo, a test) share one claim: see NodeClaimOptions.siteOf.
      siteOf: (region) => {
        const user = options.topology.region(region)?.primary.user ?? "postgres";
        const key = options.pools.keyOf(region, user);
        return `${key.host}:${key.port}/${key.database}`;
      },
    });
  }

  /**
   * Takes the node's claim in `regions` (those that answered at start): before recovery and before
   * the proxy listens. Resolves with one line per region where another live process holds it (the
   * proxy must not start), or none. A region that cannot be claimed now (down) is claimed when it
   * answers, before its recovery; until then no commit involves it.
   */
  async claimNode(regions: readonly string[]): Promise<string[]> {
    let results = await this.claim.takeAll(regions);
    // A previous life killed a moment ago may still hold it until its server sees the socket close.
    for (const waitMs of [200, 400, 800]) {
      if (!results.some((result) => result.state === "elsewhere")) break;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      results = await this.claim.takeAll(regions);
    }
    const refused = results.filter(
      (result): result is Extract<ClaimResult, { state: "elsewhere" }> => result.state === "elsewhere",
    );
    if (refused.length > 0) {
      await this.claim.close();
      return refused.map((result) => `${result.error.message}: ${result.error.hint ?? ""}`);
    }
    for (const result of results) {
      if (result.state === "unreachable")
        this.options.log.warn(
          { region: result.region, err: result.error },
          "cannot take the node claim in this region yet: writes across regions that involve it wait until it is taken",
        );
    }
    this.claimedAt = Date.now();
    this.claimTimer = setInterval(() => void this.verifyClaim(), this.options.config.txn.recoveryIntervalMs);
    this.claimTimer.unref();
    return [];
  }

  /**
   * One `node_claim_missing` alert per region where the claim was lost or is held by another
   * process, while the proxy runs: commits across regions involving it are refused meanwhile. A
   * region never claimed since start (down) is already a `backend_down` alert.
   */
  claimFacts(): Fact[] {
    if (this.closed || this.claimTimer === undefined) return [];
    const facts: Fact[] = [];
    for (const region of this.regions) {
      const state = this.claim.state(region);
      if (state !== "lost" && state !== "elsewhere") continue;
      facts.push({
        name: "node_claim_missing",
        subject: region,
        message:
          state === "elsewhere"
            ? `another process holds node ${this.claim.node}'s claim in ${region}: writes across regions involving it are refused; give each proxy its own [server] node`
            : `node ${this.claim.node}'s claim in ${region} was lost and is being taken again: writes across regions involving it are refused meanwhile`,
      });
    }
    return facts;
  }

  /**
   * The claim as the coordinators and recoveries ask it (moves' too). A refusal also asks for the
   * claim to be taken again now, so a region that answers again is not refused until the next
   * interval.
   */
  claimGuard(): ClaimGuard {
    return {
      held: (region) => this.claim.held(region),
      refusal: (regions) => {
        const refused = this.claim.refusal(regions);
        if (refused !== null) void this.verifyClaim();
        return refused;
      },
    };
  }

  private verifyClaim(): Promise<unknown> {
    if (this.closed) return Promise.resolve();
    return this.claim.verify(this.regions).catch(() => undefined);
  }

  private claimChanged(change: ClaimChange): void {
    const log = this.options.log;
    const fields = { region: change.region, node: this.claim.node, err: change.error, holder: change.holder };
    switch (change.state) {
      case "held":
        log.info(fields, "node claim held");
        return;
      case "lost":
        log.warn(
          fields,
          "node claim lost: no commit across regions involving this region until it is taken again",
        );
        // Taken again at once when nothing else holds it; otherwise at each interval.
        void this.verifyClaim();
        return;
      case "elsewhere":
        log.error(
          fields,
          "another process holds this node's claim: writes across regions involving this region are refused; give each proxy its own [server] node",
        );
        return;
      case "unclaimed":
        return;
    }
  }

  /** The claim's own connection: never pooled, since a pool's reset would drop its locks. */
  private async claimConnection(region: string): Promise<ClaimConnection> {
    const connection = await this.options.pools.connectClaim(region, claimApplicationName(this.claim.node));
    return {
      ended: connection.closed,
      // No deadline of its own: the claim bounds what it waits for, and a slow answer must not
      // close the session, since closing it is what would release the locks.
      query: (sql) => runOn(connection, sql),
      abandon: () => connection.destroy(),
      close: () => connection.close(),
    };
  }

  get logPath(): string {
    const txn = this.options.config.txn;
    return txn.logPath ?? join(txn.dataDir, `${this.options.config.server.node}.decisions.log`);
  }

  /** Opens the log and runs the start-up recovery when there may be something to recover. */
  async start(): Promise<RecoveryReport | null> {
    const txn = this.options.config.txn;
    if (txn.decisionLog === "file" && !(await fileExists(this.logPath))) return null;
    await this.ready();
    return this.startupReport;
  }

  /** The coordinator, once the decision log is open (opening it on first use). */
  async coordinator(): Promise<Coordinator> {
    return (await this.ready()).coordinator;
  }

  /** The coordinator if the log is open already: for cancels and SHOW IN DOUBT, which never open it. */
  get current(): Coordinator | null {
    return this.opened?.coordinator ?? null;
  }

  /** True once the commit decision for gid is durable: cancels must no longer reach its participants. */
  isDecided(gid: string): boolean {
    return this.opened?.coordinator.isDecided(gid) === true;
  }

  /** One recovery pass now (tests, and the console after an outage). */
  async recoverNow(): Promise<RecoveryReport | null> {
    if (this.opened === null) return null;
    return this.recoverySweep();
  }

  private async recoverySweep(): Promise<RecoveryReport | null> {
    const opened = this.opened;
    if (opened === null || this.closed) return null;
    // A region that answers again is claimed before it is recovered; one still unclaimed is skipped.
    await this.verifyClaim();
    try {
      const report = await opened.recovery.runOnce();
      this.report(report);
      this.showUnsettled(opened.coordinator);
      return report;
    } catch (error) {
      this.options.log.warn({ err: error }, "recovery pass failed; it is retried");
      return null;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.claimTimer !== undefined) clearInterval(this.claimTimer);
    const opened = this.opened ?? (await this.opening?.then(() => this.opened).catch(() => null)) ?? null;
    if (opened !== null) {
      await opened.recovery.stop();
      await opened.log.close().catch(() => {});
    }
    // Last: nothing decides or recovers any more once the claim is given up.
    await this.claim.close();
  }

  private ready(): Promise<{ coordinator: Coordinator; recovery: Recovery }> {
    this.opening ??= this.open().catch((error: unknown) => {
      // The next attempt may succeed (a table log whose home region was down).
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  private async open(): Promise<{ coordinator: Coordinator; recovery: Recovery }> {
    const { config, log: logger } = this.options;
    const txn = config.txn;
    const connector = this.connector();
    let log: DecisionLog;
    // What proves that no earlier run of this node can still decide: the file log's lock, or, for
    // the table log, the node claim (see abandonedSince).
    let abandonedBefore: number | undefined;
    switch (txn.decisionLog) {
      case "file": {
        mkdirSync(txn.logPath === undefined ? txn.dataDir : join(this.logPath, ".."), { recursive: true });
        const file = await FileDecisionLog.open({ path: this.logPath });
        if (file.tookOver !== undefined) {
          const { reason, owner } = file.tookOver;
          logger.warn(
            { path: this.logPath, reason, pid: owner?.pid, host: owner?.host },
            "took over the decision log from a run that ended without closing it",
          );
        }
        abandonedBefore = file.ownedSince;
        log = file;
        break;
      }
      case "table":
        // Shared by every proxy over this home region: recovery sees only this node's decisions.
        log = ownDecisions(
          await TableDecisionLog.open({
            executor: this.autocommit(this.options.topology.home.id),
            table: txn.logTable,
          }),
          new GidFactory(this.prefix),
        );
        abandonedBefore = this.abandonedSince();
        break;
    }
    const coordinator = new Coordinator({
      prefix: this.prefix,
      log,
      connector,
      decideDeadlineMs: txn.decideDeadlineMs,
      stepTimeoutMs: txn.stepTimeoutMs,
      observer: this.observer(),
      claim: this.claimGuard(),
    });
    const recovery = new Recovery({
      coordinator,
      log,
      connector,
      regions: this.regions,
      graceMs: txn.recoveryGraceMs,
      intervalMs: txn.recoveryIntervalMs,
      stepTimeoutMs: txn.stepTimeoutMs,
      claim: this.claimGuard(),
      ...(abandonedBefore === undefined ? {} : { abandonedBefore }),
    });
    if (this.closed) {
      await log.close();
      throw new Error("the proxy is shutting down");
    }
    this.opened = { coordinator, recovery, log };
    // Passes run here rather than by recovery.start(), so each report reaches the in-doubt ledger.
    this.startupReport = await this.recoverySweep();
    this.timer = setInterval(() => void this.recoverySweep(), txn.recoveryIntervalMs);
    this.timer.unref();
    logger.info({ prefix: this.prefix, log: txn.decisionLog }, "two-phase commit ready");
    return { coordinator, recovery };
  }

  /**
   * For a log several processes share (the table log, and the moves' log): the instant before which
   * every gid of this node's prefixes was issued by a process that can no longer decide it, or
   * undefined before the claim is taken. A process of this node decides only while it holds the
   * claim in every participant's region, and this one took it everywhere it could at start, so an
   * earlier run found prepared in a region this process holds has lost its say there. The instant
   * between its claim session ending and it noticing (packages/txn README) is covered by the
   * table's first-decision-wins: recovery writes its abort first, and a late commit reads it back.
   * So what a crashed run left undecided is rolled back at the start-up pass, not after
   * `recovery_grace_ms`.
   */
  abandonedSince(): number | undefined {
    return this.claimedAt;
  }

  private report(report: RecoveryReport): void {
    const { committed, rolledBack, waiting, failures } = report;
    const ledger = this.options.ledger;
    for (const action of [...committed, ...rolledBack]) ledger?.acknowledged(action.gid, action.region);
    for (const gid of report.completed) ledger?.settled(gid);
    if (committed.length + rolledBack.length + waiting.length + failures.length === 0) return;
    this.options.log.info(
      {
        committed: committed.length,
        rolledBack: rolledBack.length,
        waiting: waiting.length,
        failures: failures.length,
      },
      "recovery pass",
    );
  }

  /**
   * What recovery found and could not settle yet (a region down, an undecided transaction within
   * the grace period) joins SHOW IN DOUBT: decided ones as
   * commits, undecided ones as the aborts they will become.
   */
  private showUnsettled(coordinator: Coordinator): void {
    const ledger = this.options.ledger;
    if (ledger === undefined) return;
    const tracked = coordinator.inDoubt();
    const open = new Set(tracked.map((txn) => txn.gid));
    // Whatever the coordinator no longer tracks is settled everywhere.
    for (const entry of ledger.list()) if (!open.has(entry.gid)) ledger.settled(entry.gid);
    const listed = new Set(ledger.list().map((entry) => entry.gid));
    const now = Date.now();
    for (const txn of tracked) {
      if (txn.phase !== "awaiting-recovery" || listed.has(txn.gid)) continue;
      ledger.decided(txn.gid, txn.decided ? "commit" : "abort", txn.participants, new Date(now - txn.ageMs));
      for (const region of txn.participants) {
        if (!txn.unresolved.includes(region)) ledger.acknowledged(txn.gid, region);
      }
    }
  }

  /** Feeds the in-doubt ledger: decisions as they become durable, acknowledgements as they come. */
  private observer(): TxnObserver {
    const ledger = this.options.ledger;
    const participants = new Map<string, string[]>();
    return {
      onStep: (event) => {
        if (ledger === undefined) return;
        switch (event.step) {
          case "prepare":
            if (event.region !== undefined) {
              const list = participants.get(event.gid) ?? [];
              list.push(event.region);
              participants.set(event.gid, list);
            }
            return;
          case "decided":
            ledger.decided(event.gid, "commit", participants.get(event.gid) ?? []);
            return;
          case "committed-prepared":
            if (event.region !== undefined) ledger.acknowledged(event.gid, event.region);
            return;
          case "completed":
          case "aborted":
            participants.delete(event.gid);
            if (event.step === "completed") ledger.settled(event.gid);
            return;
          default:
            return;
        }
      },
      onOutcome: (outcome, gid) => {
        if (outcome === "in-doubt") participants.delete(gid);
      },
    };
  }

  /** Fresh autocommit connections from the pools, as recovery and COMMIT PREPARED retries need. */
  private connector(): ParticipantConnector {
    return {
      connect: async (region: string): Promise<RecoveryConnection> => {
        const user = this.options.topology.region(region)?.primary.user ?? "postgres";
        const lease = await this.options.pools.acquire(region, user);
        let released = false;
        return {
          query: (sql) => runOn(lease.connection, sql),
          // The coordinator or recovery stopped waiting for an answer: closed, never reused.
          abandon: (reason) => {
            abandonConnection(lease.connection, reason);
            if (released) return;
            released = true;
            lease.discard("a commit step went unanswered");
          },
          close: async () => {
            if (released) return;
            released = true;
            if (lease.connection.txStatus !== "I") lease.discard("broken");
            else lease.release();
          },
        };
      },
    };
  }

  /**
   * The table log's executor. Each statement waits at most `[txn] step_timeout_ms`: a decision
   * write that a frozen home region leaves unanswered then fails, and the commit ends with 08007
   * (outcome unknown) for recovery to settle from whatever the table holds, instead of hanging.
   */
  private autocommit(region: string): { query(sql: string): Promise<QueryResult> } {
    const timeoutMs = this.options.config.txn.stepTimeoutMs;
    return {
      query: async (sql) => {
        const user = this.options.topology.region(region)?.primary.user ?? "postgres";
        const lease = await this.options.pools.acquire(region, user);
        try {
          const result = await runOn(lease.connection, sql, timeoutMs);
          lease.release();
          return result;
        } catch (error) {
          // Timed out (destroyed already), broken, or left in a block: never pooled again.
          const unusable = !lease.connection.usable;
          if (lease.connection.txStatus !== "I" || unusable) lease.discard("broken");
          else lease.release();
          // The connection destroyed with a 57014 is the deadline's doing, not a server's cancel.
          if (unusable && error instanceof PgError && error.code === SqlState.query_canceled)
            throw stepTimedOut(region, "the decision log's statement", timeoutMs);
          throw error;
        }
      },
    };
  }
}

/**
 * Breaks a connection whose statement the coordinator stopped waiting on: its state is unknown (the
 * statement may still land), so the socket is closed and whoever holds it sees it broken.
 */
export function abandonConnection(connection: { fail(error: PgError): void }, reason: Error): void {
  connection.fail(txnErrorToPg(reason));
}

/**
 * One simple-protocol statement on a pooled backend connection, rows keyed by column name. With
 * `timeoutMs`, an answer later than that destroys the connection and rejects with 57014.
 */
export async function runOn(
  connection: {
    simpleQuery(
      sql: string,
      options?: { readonly timeoutMs?: number | undefined },
    ): Promise<{ fields: string[]; rows: (string | null)[][]; tag: string }>;
  },
  sql: string,
  timeoutMs?: number,
): Promise<QueryResult> {
  const result = await connection.simpleQuery(sql, { timeoutMs });
  return {
    command: result.tag,
    rows: result.rows.map((row) => Object.fromEntries(result.fields.map((field, i) => [field, row[i]]))),
  };
}

async function fileExists(path: string): Promise<boolean> {
  const { access } = await import("node:fs/promises");
  return access(path).then(
    () => true,
    () => false,
  );
}
