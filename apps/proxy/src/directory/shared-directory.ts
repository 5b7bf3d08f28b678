import type { DirectoryStoreConfig, MutableDirectory, RegionId } from "@geo/core";
import type { BackendConnection } from "@geo/pool";
import { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import type { HoldRegistry } from "../moves/hold-registry.js";
import type { Fact } from "../observability/alert-book.js";
import { AuthorityWatch } from "./authority-watch.js";
import { createRacing } from "./directory-store.js";
import { FollowedMoves } from "./followed-moves.js";
import { type Announcement, type Peer, readAnnouncements, readPeers } from "./peer-view.js";
import type { RegionRunner, SqlRows } from "./region-runner.js";
import { authoritiesDisagree, authorityUnreachable, leaseLapsed } from "./shared-errors.js";
import { SharedTables, snapshotXmin } from "./shared-tables.js";
import { WakeListener } from "./wake-listener.js";

export interface SharedDirectoryOptions {
  readonly store: DirectoryStoreConfig;
  readonly node: string;
  readonly home: RegionId;
  readonly authority: RegionId;
  /** Every region: at start each other one is looked at for proxies agreeing there instead. */
  readonly regions: readonly RegionId[];
  readonly runner: RegionRunner;
  /** The directory the router plans with: a visit applies what other proxies wrote. */
  readonly directory: MutableDirectory;
  /** Statements on a key another proxy moves wait here, as they do for this proxy's own moves. */
  readonly holds: HoldRegistry;
  /** Client sessions open now (reported in the heartbeat). */
  readonly sessions: () => number;
  /** Where this proxy's statement decisions are, as its heartbeat tells the peers (`Peer.decisionLog`). */
  readonly decisionLog: string;
  /** A connection of its own to the authority, for the wake-up listener (none: polls only). */
  readonly listen?: (applicationName: string) => Promise<BackendConnection>;
  /** True once a recovery pass begun after the call found every move this node prepared settled. */
  readonly settled: () => Promise<boolean>;
  readonly log: Logger;
}

/** Every this many visits the other regions are looked at for proxies agreeing there. */
const AUTHORITY_CHECK_VISITS = 10;

/**
 * One proxy's part in a directory shared by several (`[directory_store] shared = true`, agreeing
 * in one authority region). Every `poll_ms` it visits the authority: it commits a heartbeat, then
 * reads in one snapshot the directory rows written since its last visit, the peers, and the moves
 * announced. It routes geo-partitioned tables only while its last visit that got through was sent
 * under `lease_ms` ago (`refusal`); a move another proxy announces holds the move's keys here, and
 * once no statement admitted before the hold still runs, this proxy confirms it. The hold ends
 * when the announcement is withdrawn, after the move's new entries are applied.
 */
export class SharedDirectory {
  readonly tables: SharedTables;
  readonly #options: SharedDirectoryOptions;
  readonly #startedAt = new Date();
  readonly #followed: FollowedMoves;
  /**
   * performance.now() when this proxy itself pointed a key at a region (a move it committed, a
   * claim it read back). A visit sent before that read an older snapshot: it leaves the key be.
   */
  readonly #assignedAt = new Map<string, number>();
  readonly #watch: AuthorityWatch;
  readonly #wake: WakeListener | undefined;
  /** A wake-up came during a visit: another follows it at once (its snapshot may predate the news). */
  #visitAgain = false;
  #visits = 0;
  /** Keys the last visit left as they were: the next reads them whatever its snapshot. */
  #reread = new Set<string>();
  /** The last applied visit's snapshot: the next visit reads the rows it did not see. */
  #fromSnapshot: string | null = null;
  /** performance.now() when the last visit that got through was sent. */
  #grantedAt: number | undefined;
  #visitedAt = 0;
  #peers: readonly Peer[] = [];
  #announcements: readonly Announcement[] = [];
  #created = false;
  #timer: NodeJS.Timeout | undefined;
  #visiting: Promise<void> | undefined;
  #closed = false;
  #lastError: unknown;

  constructor(options: SharedDirectoryOptions) {
    this.#options = options;
    this.tables = new SharedTables(options.store.table);
    this.#watch = new AuthorityWatch(options, this.tables);
    this.#followed = new FollowedMoves({ ...options, tables: this.tables, ask: (sql) => this.ask(sql) });
    const listen = options.listen;
    this.#wake =
      listen === undefined
        ? undefined
        : new WakeListener({
            connect: () => listen(`geoproxy wake-up ${options.node}`.slice(0, 63)),
            channel: this.tables.channel,
            onWake: () => this.#wakeUp(),
            retryMs: options.store.leaseMs,
            log: options.log,
          });
  }

  get node(): string {
    return this.#options.node;
  }

  get authority(): RegionId {
    return this.#options.authority;
  }

  get config(): DirectoryStoreConfig {
    return this.#options.store;
  }

  /**
   * The first visit, then one every poll_ms. An authority that does not answer at start leaves
   * the proxy serving without a lease: statements on geo-partitioned tables get 57P03 until a
   * visit gets through.
   */
  async open(): Promise<void> {
    const elsewhere = await this.#watch.look();
    if (elsewhere.length > 0)
      throw new Error(
        `other proxies of this directory store agree in another region than this one's authority, ${this.authority}: ${elsewhere.join("; ")}. Set the same [directory_store] authority (a region id) in every proxy`,
      );
    // A frozen authority must not hold the start (each statement waits lease_ms at most): the
    // proxy then serves without a lease.
    await this.visit();
    if (this.#grantedAt === undefined)
      this.#options.log.warn(
        { authority: this.authority, err: this.#lastError },
        "the shared directory's authority did not answer: statements on geo-partitioned tables are refused until it does",
      );
    this.#schedule();
    this.#wake?.start();
  }

  /** Null while the lease holds; else the 57P03 a statement on a geo-partitioned table gets. */
  refusal(): PgError | null {
    const elsewhere = this.#watch.elsewhere;
    if (elsewhere.length > 0) return authoritiesDisagree(this.authority, elsewhere);
    const age = this.leaseAgeMs();
    if (age !== undefined && age < this.#options.store.leaseMs) return null;
    return leaseLapsed(this.authority, age, this.#options.store.leaseMs, this.#lastError);
  }

  /** Milliseconds since the last visit that got through was sent; undefined before the first. */
  leaseAgeMs(): number | undefined {
    return this.#grantedAt === undefined ? undefined : performance.now() - this.#grantedAt;
  }

  /**
   * `directory_unreachable` while the lease has lapsed (subject the authority), and `move_stalled`
   * for each announced move older than twice hold_ms (subject the move's id): its keys are held.
   */
  facts(): Fact[] {
    const facts: Fact[] = [];
    const elsewhere = this.#watch.elsewhere;
    if (elsewhere.length > 0)
      facts.push({
        name: "directory_split",
        subject: this.authority,
        message: `this proxy agrees in region ${this.authority}, while ${elsewhere.join("; ")}: statements on geo-partitioned tables are refused (55000); set the same [directory_store] authority in every proxy`,
      });
    const age = this.leaseAgeMs();
    if (age === undefined || age >= this.#options.store.leaseMs)
      facts.push({
        name: "directory_unreachable",
        subject: this.authority,
        message:
          age === undefined
            ? `the shared directory's authority has not answered since this proxy started: statements on geo-partitioned tables are refused (57P03)`
            : `the shared directory's authority last answered ${Math.round(age)} ms ago, past lease_ms: statements on geo-partitioned tables are refused (57P03)`,
      });
    const since = performance.now() - this.#visitedAt;
    for (const move of this.#announcements) {
      if (move.ageMs + since < 2 * this.#options.store.holdMs) continue;
      facts.push({
        name: "move_stalled",
        subject: `move ${move.id}`,
        message: `proxy ${move.mover} announced a move of ${move.keys.length} key(s) to ${move.target} ${Math.round((move.ageMs + since) / 1000)} s ago and has not withdrawn it: statements on those keys wait and then get 40001; restart ${move.mover} (it withdraws its moves once settled)`,
      });
    }
    return facts;
  }

  /** The peers as the last visit found them, this proxy included. */
  peers(): readonly Peer[] {
    const since = performance.now() - this.#visitedAt;
    return this.#peers.map((peer) => ({ ...peer, heartbeatAgeMs: peer.heartbeatAgeMs + since }));
  }

  /** Moves announced by other proxies whose keys this one holds now. */
  following(): readonly Announcement[] {
    return this.#announcements.filter((move) => this.#followed.has(move.id));
  }

  /**
   * Claims first writes' keys for `region` in the authority. Resolves with where each key is now:
   * `region` for those this proxy claimed, another region for a key another proxy placed first.
   */
  async claim(keys: readonly string[], region: RegionId): Promise<Map<string, RegionId> | PgError> {
    const refused = this.refusal();
    if (refused !== null) return refused;
    try {
      await this.ask(this.tables.claimSql(keys, region));
      const placed = await this.ask(this.tables.placedSql(keys));
      const where = new Map<string, RegionId>();
      for (const row of placed.rows)
        if (row["key"] != null && row["region"] != null) where.set(row["key"], row["region"]);
      for (const key of keys) {
        const placedIn = where.get(key);
        if (placedIn === undefined)
          return authorityUnreachable(
            this.authority,
            "the claim of a new key was not found after it was written",
          );
        this.#options.directory.assign(key, placedIn);
      }
      this.assignedHere(keys);
      return where;
    } catch (error) {
      return authorityUnreachable(this.authority, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * One statement in the authority for a client's statement or a move: it fails after lease_ms
   * rather than wait on a frozen authority (the statement itself finishes or fails on its own).
   */
  ask(sql: string): Promise<SqlRows> {
    return this.#options.runner.runWithin(this.authority, sql, this.#options.store.leaseMs);
  }

  /** Keys this proxy has just pointed at a region, from an answer newer than any visit under way. */
  assignedHere(keys: readonly string[]): void {
    const now = performance.now();
    for (const key of keys) this.#assignedAt.set(key, now);
  }

  /**
   * An announcement of this node's to withdraw once its moves are settled (see `settled`). Its
   * keys stay held here meanwhile, as the peers hold them: a move left in doubt may still commit.
   */
  withdrawLater(id: string, keys: readonly string[]): void {
    this.#followed.withdrawLater(id, keys);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#wake?.close();
    await this.#visiting?.catch(() => undefined);
    await this.#watch.idle();
    await this.#followed.close();
    // Moves still to withdraw: its row stays, so that a peer takes it over once its claim is free.
    if (this.#followed.pending > 0)
      this.#options.log.warn(
        { moves: this.#followed.pending },
        "stopping with announced moves not yet withdrawn: a peer withdraws them once it has settled them",
      );
    else await this.ask(this.tables.leaveSql(this.node)).catch(() => undefined);
  }

  /** One visit at a time: a slow authority delays the next, it never piles them up. */
  visit(): Promise<void> {
    this.#visiting ??= this.#visit().finally(() => {
      this.#visiting = undefined;
      if (this.#visitAgain && !this.#closed) {
        this.#visitAgain = false;
        void this.visit();
      }
    });
    return this.#visiting;
  }

  /** A peer announced or withdrew a move: visit now, or right after the visit under way. */
  #wakeUp(): void {
    if (this.#closed) return;
    if (this.#visiting !== undefined) this.#visitAgain = true;
    else void this.visit();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.visit().finally(() => this.#schedule());
    }, this.#options.store.pollMs);
    this.#timer.unref();
  }

  async #visit(): Promise<void> {
    const { log } = this.#options;
    const sentAt = performance.now();
    try {
      if (!this.#created) await this.#create();
      await this.ask(
        this.tables.heartbeatSql({
          node: this.node,
          home: this.#options.home,
          pid: process.pid,
          sessions: this.#options.sessions(),
          startedAt: this.#startedAt,
          decisionLog: this.#options.decisionLog,
        }),
      );
      let read = (await this.ask(this.tables.visitSql(this.#fromSnapshot, [...this.#reread]))).rows[0] ?? {};
      // An authority whose snapshot went back (restored, or failed over to a server behind) may
      // hold rows under ids the last snapshot saw: the whole directory is read again.
      if (this.#wentBack(read["snapshot"])) read = (await this.ask(this.tables.visitSql(null))).rows[0] ?? {};
      await this.#apply(read, sentAt);
      const lapsed = this.#grantedAt !== undefined && sentAt - this.#grantedAt >= this.#options.store.leaseMs;
      this.#grantedAt = sentAt;
      this.#visitedAt = performance.now();
      this.#lastError = undefined;
      if (lapsed)
        log.info(
          { authority: this.authority },
          "the shared directory's authority answers again: routing resumes",
        );
      // Two proxies starting at the same moment at different authorities do not see each other at start.
      if (++this.#visits % AUTHORITY_CHECK_VISITS === 0) this.#watch.lookSoon();
      // A recovery pass may take a region's step timeout: it runs beside the visits, never in one.
      this.#followed.withdrawSettled();
    } catch (error) {
      // An authority restored without the shared tables (or that lost them in a crash) gets them again.
      if (error instanceof PgError && error.code === "42P01") this.#created = false;
      if (this.#lastError === undefined)
        log.warn(
          { authority: this.authority, err: error },
          "a visit to the shared directory's authority failed",
        );
      this.#lastError = error;
    }
  }

  #wentBack(snapshot: string | null | undefined): boolean {
    if (this.#fromSnapshot === null || snapshot == null) return false;
    return snapshotXmin(snapshot) < snapshotXmin(this.#fromSnapshot);
  }

  async #create(): Promise<void> {
    // Proxies starting together race on CREATE ... IF NOT EXISTS.
    await createRacing(() => this.ask(this.tables.createSql()));
    const own = await this.ask(this.tables.ownMovesSql(this.node));
    for (const row of own.rows) if (row["id"] != null) this.#followed.withdrawLater(row["id"]);
    this.#created = true;
  }

  async #apply(read: Record<string, string | null>, sentAt: number): Promise<void> {
    const directory = this.#options.directory;
    const skipped = new Set<string>();
    for (const [key, region] of JSON.parse(read["entries"] ?? "[]") as [string, string][]) {
      if ((this.#assignedAt.get(key) ?? -Infinity) > sentAt) {
        skipped.add(key);
        continue;
      }
      if (directory.lookup(key) !== region) directory.assign(key, region);
    }
    for (const [key, at] of this.#assignedAt) if (at <= sentAt) this.#assignedAt.delete(key);
    // A skipped key is read again by the next visit, whatever its snapshot: that one is newer than
    // the local change, so what it finds for the key (that change, or a later one) is applied.
    this.#reread = skipped;
    this.#fromSnapshot = read["snapshot"] ?? this.#fromSnapshot;
    const moves = readAnnouncements(read["moves"]);
    this.#announcements = moves;
    this.#peers = readPeers(read["peers"], moves);
    await this.#followed.follow(moves);
  }
}
