import type { DirectoryStoreConfig, RegionId } from "@geo/core";
import type { PgError } from "@geo/proto";
import type { Fact } from "../observability/alert-book.js";
import { AuthorityWatch } from "./authority-watch.js";
import { FollowedMoves } from "./followed-moves.js";
import { KeyClaims } from "./key-claims.js";
import { KnownEntries } from "./known-entries.js";
import { PaxosClaims } from "./paxos-claims.js";
import { type Announcement, otherAuthorities, type Peer } from "./peer-view.js";
import { Quorum } from "./quorum.js";
import { RegionReads } from "./region-reads.js";
import type { SharedDirectoryOptions } from "./shared-directory-options.js";
import { authoritiesDisagree, leaseLapsed } from "./shared-errors.js";
import { sharedFacts } from "./shared-facts.js";
import { SharedTables } from "./shared-tables.js";
import { mergeVisit, type RegionVisit } from "./visit-merge.js";
import { WakeListener } from "./wake-listener.js";

export type { SharedDirectoryOptions } from "./shared-directory-options.js";

/** Every this many visits the other regions are looked at for proxies agreeing there. */
const AUTHORITY_CHECK_VISITS = 10;

/**
 * One proxy's part in a directory shared by several (`[directory_store] shared = true`, agreeing
 * in one authority region, or in a majority of the regions: `quorum`). Every `poll_ms` it visits
 * the authority: it commits a heartbeat, then
 * reads in one snapshot the directory rows written since its last visit, the peers, and the moves
 * announced. It routes geo-partitioned tables only while its last visit that got through was sent
 * under `lease_ms` ago (`refusal`); a move another proxy announces holds the move's keys here, and
 * once no statement admitted before the hold still runs, this proxy confirms it. The hold ends
 * when the announcement is withdrawn, after the move's new entries are applied.
 */
export class SharedDirectory {
  readonly tables: SharedTables;
  /** Where every step of the protocol must be taken: the authority region, or a majority of all. */
  readonly quorum: Quorum;
  readonly #options: SharedDirectoryOptions;
  readonly #claims: KeyClaims;
  readonly #startedAt = new Date();
  readonly #followed: FollowedMoves;
  readonly #watch: AuthorityWatch;
  readonly #wake: WakeListener | undefined;
  /** A wake-up came during a visit: another follows it at once (its snapshot may predate the news). */
  #visitAgain = false;
  #visits = 0;
  /** Keys the last visit left as they were: the next reads them whatever its snapshot. */
  #reread = new Set<string>();
  /** Each region's part of the visits: its tables, its snapshot, whether it is read whole, its catch-up. */
  readonly #reads: RegionReads;
  /**
   * Each key's newest entry read, to tell a region that is behind (one that missed moves, or an
   * authority restored or failed over to a server that was behind), and the keys changed here.
   */
  readonly #known: KnownEntries;
  /** Moves some region listed at the last visit: each region is asked whether it saw them withdrawn. */
  #listed: readonly string[] = [];
  /** Peers whose heartbeat names another authority: routing on both would split the directory. */
  #otherAuthorities: readonly string[] = [];
  /** performance.now() when the last visit that got through was sent. */
  #grantedAt: number | undefined;
  #visitedAt = 0;
  #peers: readonly Peer[] = [];
  #announcements: readonly Announcement[] = [];
  #timer: NodeJS.Timeout | undefined;
  #visiting: Promise<void> | undefined;
  #closed = false;
  #lastError: unknown;

  constructor(options: SharedDirectoryOptions) {
    this.#options = options;
    this.tables = new SharedTables(options.store.table);
    const majority = options.authority === "majority";
    this.quorum = new Quorum(
      options.runner,
      majority ? options.everyRegion : [options.authority],
      majority,
      options.store.leaseMs,
    );
    this.#known = new KnownEntries(options.directory);
    this.#claims = new KeyClaims({
      quorum: this.quorum,
      tables: this.tables,
      paxos: majority ? new PaxosClaims(this.quorum, this.tables, options.node) : undefined,
      directory: options.directory,
      known: this.#known,
    });
    this.#reads = new RegionReads(this.quorum, this.tables, options.log, (id) =>
      this.#followed.withdrawLater(id),
    );
    this.#watch = new AuthorityWatch({ ...options, authority: this.authority }, this.tables);
    this.#followed = new FollowedMoves({
      ...options,
      tables: this.tables,
      quorum: this.quorum,
      ...(majority ? { refresh: (keys: readonly string[]) => this.refresh(keys) } : {}),
    });
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

  /** The authority region's id, or "majority". */
  get authority(): string {
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
    const elsewhere = this.quorum.majority ? [] : await this.#watch.look();
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
    const elsewhere = this.#disagreeing();
    if (elsewhere.length > 0) return authoritiesDisagree(this.quorum.where, elsewhere);
    const age = this.leaseAgeMs();
    if (age !== undefined && age < this.#options.store.leaseMs) return null;
    return leaseLapsed(this.quorum.where, age, this.#options.store.leaseMs, this.#lastError);
  }

  /** Live proxies agreeing elsewhere: in another region's tables, or naming another authority. */
  #disagreeing(): readonly string[] {
    const watched = this.#watch.elsewhere;
    if (this.#otherAuthorities.length === 0) return watched;
    return [...watched, ...this.#otherAuthorities];
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
    return sharedFacts({
      authority: this.authority,
      where: this.quorum.where,
      leaseMs: this.#options.store.leaseMs,
      holdMs: this.#options.store.holdMs,
      elsewhere: this.#disagreeing(),
      leaseAgeMs: this.leaseAgeMs(),
      announcements: this.#announcements,
      sinceVisitMs: performance.now() - this.#visitedAt,
    });
  }

  /** The peers as the last visit found them, this proxy included. */
  peers(): readonly Peer[] {
    const since = performance.now() - this.#visitedAt;
    return this.#peers.map((peer) => ({ ...peer, heartbeatAgeMs: peer.heartbeatAgeMs + since }));
  }

  /**
   * Reads `keys`' entries from a majority and points the directory at the newest of each; false
   * when no majority answered. A move's commit reached a majority before it was withdrawn, so a
   * read begun after a withdrawal was seen finds what the move left.
   */
  refresh(keys: readonly string[]): Promise<boolean> {
    return this.#known.refresh(keys, (sql) => this.quorum.run(sql), this.tables);
  }

  /** The newest version of `key`'s entry a visit read; a move's new version must be above it. */
  versionOf(key: string): number | undefined {
    return this.#known.versionOf(key);
  }

  /** The regions whose last step answered. */
  reachable(): ReadonlySet<RegionId> {
    return this.quorum.answering();
  }

  /** Moves announced by other proxies whose keys this one holds now. */
  following(): readonly Announcement[] {
    return this.#announcements.filter((move) => this.#followed.has(move.id));
  }

  /**
   * Claims first writes' keys for `region` where the proxies agree (key-claims.ts). Resolves with
   * where each key is now; `allOrNothing`: a COPY's, which stops at the first batch that lost one.
   */
  claim(
    keys: readonly string[],
    region: RegionId,
    allOrNothing = false,
  ): Promise<Map<string, RegionId> | PgError> {
    const refused = this.refusal();
    if (refused !== null) return Promise.resolve(refused);
    return this.#claims.claim(keys, region, allOrNothing);
  }

  /** Keys this proxy just pointed at a region; `moved`: the region and versions its committed move gave them. */
  assignedHere(
    keys: readonly string[],
    moved?: { to: RegionId; versions: ReadonlyMap<string, number> },
  ): void {
    this.#known.assigned(keys, moved);
  }

  /**
   * A region a move left out: it is sent the move's entries now (if it answers), and read whole
   * at the next visit that hears from it, which catches up whatever else it lacks.
   */
  catchUpLeftOut(region: RegionId, rows: readonly (readonly [string, RegionId, number])[]): void {
    this.#reads.leftOut(region, rows);
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
    else await this.quorum.run(this.tables.leaveSql(this.node)).catch(() => undefined);
    await this.#reads.idle();
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
      // The heartbeat is taken where the proxies agree before anything is read there: a mover
      // that did not see it has announced already, and this visit's reads find the announcement.
      await this.quorum.each((region) =>
        this.#reads.beat(region, () => this.tables.heartbeatSql(this.#beat()), this.node),
      );
      const reread = [...this.#reread];
      const listed = this.#listed;
      const visits = await this.quorum.each((region) => this.#reads.read(region, reread, listed));
      await this.#apply([...visits.values()], sentAt);
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
      if (!this.quorum.majority && ++this.#visits % AUTHORITY_CHECK_VISITS === 0) this.#watch.lookSoon();
      // A recovery pass may take a region's step timeout: it runs beside the visits, never in one.
      this.#followed.withdrawSettled();
    } catch (error) {
      if (this.#lastError === undefined)
        log.warn(
          { authority: this.authority, err: error },
          "a visit to the shared directory's authority failed",
        );
      this.#lastError = error;
    }
  }

  #beat(): Parameters<SharedTables["heartbeatSql"]>[0] {
    return {
      node: this.node,
      home: this.#options.home,
      pid: process.pid,
      sessions: this.#options.sessions(),
      startedAt: this.#startedAt,
      decisionLog: this.#options.decisionLog,
      authority: this.authority,
      statements: this.#options.holds.statements,
      holds: this.#options.holds.moving,
    };
  }

  async #apply(visits: readonly RegionVisit[], sentAt: number): Promise<void> {
    const merged = mergeVisit(visits, this.#known.entries);
    const skipped = this.#known.apply(merged.changed, sentAt);
    // A skipped key is read again by the next visit, whatever its snapshot: that one is newer than
    // the local change, so what it finds for the key (that change, or a later one) is applied.
    this.#reread = skipped;
    this.#reads.applied(visits);
    this.#listed = merged.listed;
    if (merged.disputed.length > 0)
      this.#options.log.error(
        { keys: merged.disputed.slice(0, 10), count: merged.disputed.length },
        "regions give these keys different regions under one version: the one read first is kept",
      );
    this.#reads.catchUp(merged.behind, merged.revived);
    this.#announcements = merged.moves;
    this.#peers = merged.peers;
    this.#otherAuthorities = otherAuthorities(
      merged.peers,
      this.node,
      this.authority,
      this.#options.store.leaseMs,
    );
    await this.#followed.follow(merged.moves);
  }
}
