import type { DirectoryStoreConfig, MutableDirectory, RegionId } from "@geo/core";
import type { BackendConnection } from "@geo/pool";
import { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import type { HoldRegistry } from "../moves/hold-registry.js";
import type { Fact } from "../observability/alert-book.js";
import { AuthorityWatch } from "./authority-watch.js";
import { createRacing } from "./directory-store.js";
import { FollowedMoves } from "./followed-moves.js";
import { PaxosClaims } from "./paxos-claims.js";
import type { Announcement, Peer } from "./peer-view.js";
import { Quorum } from "./quorum.js";
import type { RegionRunner, SqlRows } from "./region-runner.js";
import { authoritiesDisagree, authorityUnreachable, leaseLapsed } from "./shared-errors.js";
import { SharedTables, snapshotXmin } from "./shared-tables.js";
import { type Entry, mergeVisit, type RegionVisit } from "./visit-merge.js";
import { WakeListener } from "./wake-listener.js";

export interface SharedDirectoryOptions {
  readonly store: DirectoryStoreConfig;
  readonly node: string;
  readonly home: RegionId;
  /** The region the proxies agree in, or "majority": a majority of every region. */
  readonly authority: RegionId | "majority";
  /** The regions reachable at start: with one authority region, each other one is looked at for proxies agreeing there instead. */
  readonly regions: readonly RegionId[];
  /** Every region of the topology: the acceptors of a majority authority. */
  readonly everyRegion: readonly RegionId[];
  readonly runner: RegionRunner;
  /** The directory the router plans with: a visit applies what other proxies wrote. */
  readonly directory: MutableDirectory;
  /** Statements on a key another proxy moves wait here, as they do for this proxy's own moves. */
  readonly holds: HoldRegistry;
  /** Client sessions open now (reported in the heartbeat). */
  readonly sessions: () => number;
  /** Where this proxy's statement decisions are, as its heartbeat tells the peers (`Peer.decisionLog`). */
  readonly decisionLog: string;
  /** A connection of its own to the authority (the home region with a majority), for the wake-up listener (none: polls only). */
  readonly listen?: (applicationName: string) => Promise<BackendConnection>;
  /** True once a recovery pass begun after the call found every move this node prepared settled. */
  readonly settled: () => Promise<boolean>;
  readonly log: Logger;
}

/** Every this many visits the other regions are looked at for proxies agreeing there. */
const AUTHORITY_CHECK_VISITS = 10;

/** Entries written to a region that is behind, per statement. */
const CATCH_UP_BATCH = 1000;

/** New keys claimed per statement (a COPY may bring many). */
const CLAIM_BATCH = 1000;

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
  /** Where every step of the protocol must be taken: the authority region, or a majority of all. */
  readonly quorum: Quorum;
  readonly #options: SharedDirectoryOptions;
  readonly #claims: PaxosClaims | undefined;
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
  /** Per region, the last applied visit's snapshot there: the next visit reads the rows it did not see. */
  readonly #fromSnapshot = new Map<RegionId, string>();
  /** Regions whose last read failed, or whose whole read is not applied yet: read whole when they answer. */
  readonly #missed = new Set<RegionId>();
  /**
   * Each key's newest entry a visit read, to tell a region that is behind (one that missed moves,
   * or an authority restored or failed over to a server that was behind): the rows moved since.
   */
  readonly #known = new Map<string, Entry>();
  /** Moves some region listed at the last visit: each region is asked whether it saw them withdrawn. */
  #listed: readonly string[] = [];
  /** Peers whose heartbeat names another authority: routing on both would split the directory. */
  #otherAuthorities: readonly string[] = [];
  /** Writes to regions that were behind, running beside the visits. */
  #catchingUp: Promise<void> | undefined;
  /** performance.now() when the last visit that got through was sent. */
  #grantedAt: number | undefined;
  #visitedAt = 0;
  #peers: readonly Peer[] = [];
  #announcements: readonly Announcement[] = [];
  readonly #created = new Set<RegionId>();
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
    this.#claims = majority ? new PaxosClaims(this.quorum, this.tables, options.node) : undefined;
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
    const facts: Fact[] = [];
    const elsewhere = this.#disagreeing();
    if (elsewhere.length > 0)
      facts.push({
        name: "directory_split",
        subject: this.authority,
        message: `this proxy agrees in ${this.quorum.where}, while ${elsewhere.join("; ")}: statements on geo-partitioned tables are refused (55000); set the same [directory_store] authority in every proxy`,
      });
    const age = this.leaseAgeMs();
    if (age === undefined || age >= this.#options.store.leaseMs)
      facts.push({
        name: "directory_unreachable",
        subject: this.authority,
        message:
          age === undefined
            ? `the shared directory's authority (${this.quorum.where}) has not answered since this proxy started: statements on geo-partitioned tables are refused (57P03)`
            : `the shared directory's authority (${this.quorum.where}) last answered ${Math.round(age)} ms ago, past lease_ms: statements on geo-partitioned tables are refused (57P03)`,
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

  /**
   * Reads `keys`' entries from a majority and points the directory at the newest of each; false
   * when no majority answered. A move's commit reached a majority before it was withdrawn, so a
   * read begun after a withdrawal was seen finds what the move left.
   */
  async refresh(keys: readonly string[]): Promise<boolean> {
    const sentAt = performance.now();
    let answers: Map<RegionId, SqlRows>;
    try {
      answers = await this.quorum.run(this.tables.versionsSql(keys));
    } catch {
      return false;
    }
    const directory = this.#options.directory;
    for (const answer of answers.values())
      for (const row of answer.rows) {
        const key = row["key"];
        const region = row["region"];
        if (key == null || region == null) continue;
        const version = Number(row["version"] ?? 0);
        const known = this.#known.get(key);
        if (known === undefined || version > known.version) this.#known.set(key, { region, version });
      }
    for (const key of keys) {
      // A key this proxy pointed elsewhere after the read was sent (its own move) keeps that.
      if ((this.#assignedAt.get(key) ?? -Infinity) > sentAt) continue;
      const newest = this.#known.get(key);
      if (newest !== undefined && directory.lookup(key) !== newest.region)
        directory.assign(key, newest.region);
    }
    return true;
  }

  /** The newest version of `key`'s entry a visit read; a move's new version must be above it. */
  versionOf(key: string): number | undefined {
    return this.#known.get(key)?.version;
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
   * Claims first writes' keys for `region` where the proxies agree (with a majority, by Paxos),
   * a batch per statement. Resolves with where each key is now: `region` for those this proxy
   * claimed, another region for a key another proxy placed first. With `allOrNothing` (a COPY,
   * which fails whole when one key went elsewhere) it stops after the first batch with such a
   * key: two COPYs of the same keys then do not each win a batch of them and both fail.
   */
  async claim(
    keys: readonly string[],
    region: RegionId,
    allOrNothing = false,
  ): Promise<Map<string, RegionId> | PgError> {
    const refused = this.refusal();
    if (refused !== null) return refused;
    try {
      const where = new Map<string, RegionId>();
      for (let i = 0; i < keys.length; i += CLAIM_BATCH) {
        const batch = keys.slice(i, i + CLAIM_BATCH);
        const placed = await this.#claimBatch(batch, region);
        for (const key of batch) {
          const placedIn = placed.get(key);
          if (placedIn === undefined)
            return authorityUnreachable(
              this.quorum.where,
              "the claim of a new key was not found after it was written",
            );
          where.set(key, placedIn);
          this.#options.directory.assign(key, placedIn);
        }
        this.assignedHere(batch);
        if (allOrNothing && batch.some((key) => placed.get(key) !== region)) break;
      }
      return where;
    } catch (error) {
      return authorityUnreachable(this.quorum.where, error instanceof Error ? error.message : String(error));
    }
  }

  async #claimBatch(keys: readonly string[], region: RegionId): Promise<Map<string, RegionId>> {
    if (this.#claims !== undefined) return this.#claims.claim(keys, region);
    await this.ask(this.tables.claimSql(keys, region));
    const placed = await this.ask(this.tables.placedSql(keys));
    const where = new Map<string, RegionId>();
    for (const row of placed.rows)
      if (row["key"] != null && row["region"] != null) where.set(row["key"], row["region"]);
    return where;
  }

  /**
   * One statement where the proxies agree, for a client's statement or a move: it fails after
   * lease_ms rather than wait on a frozen authority. With a majority, the first answer of a step
   * a majority took (`quorum` gives every answer, for steps whose answers differ by region).
   */
  ask(sql: string): Promise<SqlRows> {
    return this.quorum.one(sql);
  }

  /**
   * Keys this proxy has just pointed at a region, from an answer newer than any visit under way;
   * `moved`: the region and versions its committed move gave them.
   */
  assignedHere(
    keys: readonly string[],
    moved?: { to: RegionId; versions: ReadonlyMap<string, number> },
  ): void {
    const now = performance.now();
    for (const key of keys) {
      this.#assignedAt.set(key, now);
      const version = moved?.versions.get(key);
      if (moved !== undefined && version !== undefined && version > (this.#known.get(key)?.version ?? -1))
        this.#known.set(key, { region: moved.to, version });
    }
  }

  /**
   * A region a move left out: it is sent the move's entries now (if it answers), and read whole
   * at the next visit that hears from it, which catches up whatever else it lacks.
   */
  catchUpLeftOut(region: RegionId, rows: readonly (readonly [string, RegionId, number])[]): void {
    this.#missed.add(region);
    void this.quorum.in(region, this.tables.catchUpSql(rows)).catch(() => undefined);
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
    await this.#catchingUp;
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
      await this.quorum.each(async (region) => {
        if (!this.#created.has(region)) await this.#create(region);
        return this.quorum
          .in(region, this.tables.heartbeatSql(this.#beat()))
          .catch(async (error: unknown) => {
            // A region restored without the shared tables (or that lost them in a crash) gets them again.
            if (!(error instanceof PgError && error.code === "42P01")) throw error;
            // What the region held is gone: read it whole and catch it up.
            this.#missed.add(region);
            await this.#create(region);
            return this.quorum.in(region, this.tables.heartbeatSql(this.#beat()));
          });
      });
      const reread = [...this.#reread];
      const listed = this.#listed;
      const visits = await this.quorum.each((region) => this.#read(region, reread, listed));
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
    };
  }

  /**
   * One region's part of a visit. A region without a snapshot yet, or that the last visit did not
   * hear from (it may have missed steps), is read whole; so is one whose snapshot went back
   * (restored, or failed over to a server behind): it may hold rows under ids the last one saw.
   */
  async #read(region: RegionId, reread: readonly string[], listed: readonly string[]): Promise<RegionVisit> {
    try {
      const from = this.#missed.has(region) ? null : (this.#fromSnapshot.get(region) ?? null);
      let read = (await this.quorum.in(region, this.tables.visitSql(from, reread, listed))).rows[0] ?? {};
      if (from !== null && this.#wentBack(from, read["snapshot"])) {
        read = (await this.quorum.in(region, this.tables.visitSql(null, [], listed))).rows[0] ?? {};
        return { region, full: true, read };
      }
      return { region, full: from === null, read };
    } catch (error) {
      // A region restored without the shared tables (or that lost them in a crash) gets them again.
      const lost = error instanceof PgError && error.code === "42P01";
      if (lost) this.#created.delete(region);
      // With a majority, a region that did not answer may miss steps the others took: read whole
      // when back. One authority region missed nothing; it is read from its last snapshot.
      if (lost || this.quorum.majority) this.#missed.add(region);
      throw error;
    }
  }

  #wentBack(from: string, snapshot: string | null | undefined): boolean {
    return snapshot != null && snapshotXmin(snapshot) < snapshotXmin(from);
  }

  async #create(region: RegionId): Promise<void> {
    // Proxies starting together race on CREATE ... IF NOT EXISTS.
    await createRacing(() => this.quorum.in(region, this.tables.createSql()));
    const own = await this.quorum.in(region, this.tables.ownMovesSql(this.node));
    for (const row of own.rows) if (row["id"] != null) this.#followed.withdrawLater(row["id"]);
    this.#created.add(region);
  }

  async #apply(visits: readonly RegionVisit[], sentAt: number): Promise<void> {
    const directory = this.#options.directory;
    const merged = mergeVisit(visits, this.#known);
    const skipped = new Set<string>();
    for (const [key, entry] of merged.changed) {
      if ((this.#assignedAt.get(key) ?? -Infinity) > sentAt) {
        skipped.add(key);
        continue;
      }
      if (directory.lookup(key) !== entry.region) directory.assign(key, entry.region);
    }
    for (const [key, at] of this.#assignedAt) if (at <= sentAt) this.#assignedAt.delete(key);
    // A skipped key is read again by the next visit, whatever its snapshot: that one is newer than
    // the local change, so what it finds for the key (that change, or a later one) is applied.
    this.#reread = skipped;
    for (const visit of visits) {
      if (visit.full) this.#missed.delete(visit.region);
      if (visit.read["snapshot"] != null) this.#fromSnapshot.set(visit.region, visit.read["snapshot"]);
    }
    this.#listed = merged.listed;
    if (merged.disputed.length > 0)
      this.#options.log.error(
        { keys: merged.disputed.slice(0, 10), count: merged.disputed.length },
        "regions give these keys different regions under one version: the one read first is kept",
      );
    if (merged.behind.size > 0 || merged.revived.size > 0) this.#catchUp(merged.behind, merged.revived);
    this.#announcements = merged.moves;
    this.#peers = merged.peers;
    this.#otherAuthorities = merged.peers
      .filter(
        (peer) => peer.node !== this.node && peer.authority != null && peer.authority !== this.authority,
      )
      .filter((peer) => peer.heartbeatAgeMs < 1.5 * this.#options.store.leaseMs)
      .map((peer) => `${peer.node} (homed in ${peer.home}) agrees in ${authorityWhere(peer.authority!)}`);
    await this.#followed.follow(merged.moves);
  }

  /**
   * Writes to the regions a visit found behind what they missed while out of reach: the newest
   * entries, and the withdrawals of moves they still list. Runs beside the visits, one at a time;
   * what it leaves undone the next visit finds again.
   */
  #catchUp(
    behind: ReadonlyMap<RegionId, [string, RegionId, number][]>,
    revived: ReadonlyMap<RegionId, string[]>,
  ): void {
    if (this.#catchingUp !== undefined) return;
    this.#catchingUp = (async () => {
      for (const [region, ids] of revived)
        await this.quorum.in(region, this.tables.withdrawSql(ids)).catch(() => undefined);
      for (const [region, rows] of behind) {
        for (let i = 0; i < rows.length; i += CATCH_UP_BATCH) {
          const ok = await this.quorum
            .in(region, this.tables.catchUpSql(rows.slice(i, i + CATCH_UP_BATCH)))
            .then(
              () => true,
              () => false,
            );
          if (!ok) break;
        }
        this.#options.log.info(
          { region, entries: rows.length },
          "a region that was out of reach has the directory entries it missed",
        );
      }
    })()
      .catch((error: unknown) =>
        this.#options.log.warn({ err: error }, "catching a region up failed; tried again later"),
      )
      .finally(() => {
        this.#catchingUp = undefined;
      });
  }
}

/** A peer's authority, as messages name it. */
function authorityWhere(authority: string): string {
  return authority === "majority" ? "a majority of regions" : `region ${authority}`;
}
