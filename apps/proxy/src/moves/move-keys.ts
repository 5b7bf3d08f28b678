import type { RegionId } from "@geo/core";
import type { Lease } from "@geo/pool";
import { PgError, SqlState } from "@geo/proto";
import type { Coordinator, Participant } from "@geo/txn";
import type { DirectoryStore } from "../directory/directory-store.js";
import { query, type RegionRunner } from "../directory/region-runner.js";
import { ident, inList, qualified } from "../directory/sql-text.js";
import type { Logger } from "../log.js";
import type { Hold, HoldRegistry } from "./hold-registry.js";
import { copyRows, type MovedTable } from "./move-copy.js";
import {
  keyAlreadyMoving,
  keyInSeveralRegions,
  moveAbandoned,
  moveFailed,
  moveLockTimeout,
  moveNeedsRegion,
  outsideForeignKey,
  unknownRegion,
} from "./move-errors.js";
import { beginEverywhere, leaveOut, readEntries } from "./move-regions.js";
import type { SharedMoves } from "./shared-moves.js";
import { foreignKeySql, orderTables } from "./table-order.js";

export type { MovedTable } from "./move-copy.js";

/** A move running now, as the admin port shows it. */
export interface RunningMove {
  readonly keys: readonly string[];
  readonly to: RegionId;
  readonly startedAt: Date;
}

/** What moves did since start: rows into and out of each region, moves committed, moves running. */
export interface MoveProgress {
  readonly running: readonly RunningMove[];
  readonly rowsIn: ReadonlyMap<RegionId, number>;
  readonly rowsOut: ReadonlyMap<RegionId, number>;
  readonly done: number;
}

export interface MoveSettings {
  readonly lockTimeoutMs: number;
  /** Between recovery passes while a move left in doubt is waited out. */
  readonly recoveryIntervalMs: number;
  /** True once a recovery pass begun after the call found every move this node prepared settled. */
  readonly settled: () => Promise<boolean>;
}

/**
 * Moves keys, with their rows in every geo-partitioned table, to one region in one atomic step:
 *
 * 1. Hold the keys' writes (new writes for them wait; reads still run where the rows are) and
 *    wait for the writes already under way.
 * 2. In every region, on the proxy's own pooled connections: BEGIN, `SET LOCAL lock_timeout`,
 *    `SET LOCAL geoproxy.moving = on` (the guards let this transaction alone through).
 * 3. Find where each key's rows are (a key with rows in two regions is refused), then in each
 *    source `LOCK TABLE ... IN EXCLUSIVE MODE`: writers wait, readers do not.
 * 4. Per table, parents first: read the rows (as JSON), insert them in the destination; then,
 *    children first, delete them in the source. Each count must equal the one before it.
 * 5. Rewrite the key's directory entry in every region; hold the keys' reads too and wait for
 *    the reads under way (with peers: each does, and confirms); commit everywhere in two phases.
 * 6. Point the in-memory directory at the destination and let the held statements go.
 *
 * Any failure before the commit decision rolls every region back: nothing changed.
 */
export class KeyMover {
  readonly #running = new Set<RunningMove>();
  /** Keys of the moves running now: a second move of one is refused, never run beside the first. */
  readonly #moving = new Set<string>();
  readonly #rowsIn = new Map<RegionId, number>();
  readonly #rowsOut = new Map<RegionId, number>();
  #done = 0;
  #shared: SharedMoves | undefined;

  constructor(
    private readonly store: DirectoryStore,
    private readonly runner: RegionRunner,
    private readonly holds: HoldRegistry,
    private readonly coordinator: () => Promise<Coordinator>,
    private readonly settings: MoveSettings,
    private readonly log: Logger,
  ) {}

  /** From now on every move is announced to the shared directory's peers before it copies. */
  share(shared: SharedMoves): void {
    this.#shared = shared;
  }

  async move(rawKeys: readonly string[], to: RegionId): Promise<MovedTable[] | PgError> {
    const topology = this.store.topology;
    if (!topology.hasRegion(to)) return unknownRegion(to, topology.regionIds);
    const keys = [...new Set(rawKeys.map((key) => this.store.canonical(key)))];
    // Two moves of a key at once would each read where its rows were before the other moved them.
    const busy = keys.find((key) => this.#moving.has(key));
    if (busy !== undefined) return keyAlreadyMoving(busy);
    for (const key of keys) this.#moving.add(key);
    const running: RunningMove = { keys, to, startedAt: new Date() };
    this.#running.add(running);
    // While the rows are copied only writes wait: reads run where the rows still are.
    const hold = this.holds.hold(keys, "writes");
    let inDoubt = false;
    try {
      if (!(await this.holds.drained(hold, this.settings.lockTimeoutMs)))
        return moveLockTimeout("statements on the key were still running", this.settings.lockTimeoutMs);
      // Every live peer holds the keys too before a row is copied (docs/directory.md, "Several proxies").
      const announced = await this.#shared?.announcer.announce(keys, to);
      if (announced instanceof PgError) return announced;
      const progress = { committing: false };
      // Before the commit reads wait too, here and in every peer: none may read the source after
      // its rows are gone, nor the destination before its rows are there.
      const holdReads = async (): Promise<PgError | null> => {
        hold.holdReads();
        if (!(await this.holds.drained(hold, this.settings.lockTimeoutMs)))
          return moveLockTimeout("reads of the key were still running", this.settings.lockTimeoutMs);
        return (await announced?.holdReads()) ?? null;
      };
      const moved = await this.moveHeld(keys, to, progress, holdReads);
      // Withdrawn now when it committed everywhere, or was refused before its commit began; when a
      // commit began and did not finish everywhere, once recovery has settled this node's moves.
      const settled =
        moved instanceof PgError ? !progress.committing : moved.every((row) => row.state === "moved");
      await announced?.withdraw(settled);
      if (!(moved instanceof PgError)) this.#count(moved);
      // Refused once its commit had begun, the move may still commit through recovery: its keys
      // stay held, and unmovable, until recovery settles it and the directory says where they went.
      inDoubt = moved instanceof PgError && progress.committing;
      if (inDoubt) void this.#releaseWhenSettled(keys, to, hold, running);
      return moved;
    } finally {
      if (!inDoubt) this.#release(keys, hold, running);
    }
  }

  #release(keys: readonly string[], hold: Hold, running: RunningMove): void {
    hold.release();
    this.#running.delete(running);
    for (const key of keys) this.#moving.delete(key);
  }

  /** Waits for recovery to settle a move left in doubt, points the keys where it left them, lets them go. */
  async #releaseWhenSettled(
    keys: readonly string[],
    to: RegionId,
    hold: Hold,
    running: RunningMove,
  ): Promise<void> {
    try {
      while (!(await this.settings.settled().catch(() => false)))
        await new Promise((resolve) => setTimeout(resolve, this.settings.recoveryIntervalMs));
      // Settled, every region that took part has the keys' entries as the move left them: with
      // one authority region every region took part, and the destination's is read; with a
      // majority, the newest a majority holds.
      const shared = this.#shared;
      if (shared?.need !== undefined) {
        while (!(await shared.refresh(keys)))
          await new Promise((resolve) => setTimeout(resolve, this.settings.recoveryIntervalMs));
      } else {
        const entries = await this.runner.run(to, this.store.table.entriesSql(keys));
        for (const row of entries.rows)
          if (row["key"] != null && row["region"] != null)
            this.store.directory.assign(row["key"], row["region"]);
      }
      this.#shared?.assigned(keys);
      this.log.info({ keys: keys.length, to }, "a move left in doubt is settled: its keys are routed again");
    } catch (error) {
      this.log.error(
        { err: error, keys: keys.length },
        "could not read where a settled move left its keys; they stay held",
      );
      return;
    }
    this.#release(keys, hold, running);
  }

  /** Moves running now and what the finished ones moved. */
  progress(): MoveProgress {
    return { running: [...this.#running], rowsIn: this.#rowsIn, rowsOut: this.#rowsOut, done: this.#done };
  }

  #count(moved: readonly MovedTable[]): void {
    this.#done++;
    for (const row of moved) {
      if (row.rows === 0 || row.from === row.to) continue;
      this.#rowsIn.set(row.to, (this.#rowsIn.get(row.to) ?? 0) + row.rows);
      this.#rowsOut.set(row.from, (this.#rowsOut.get(row.from) ?? 0) + row.rows);
    }
  }

  private async moveHeld(
    keys: readonly string[],
    to: RegionId,
    progress: { committing: boolean },
    holdReads: () => Promise<PgError | null>,
  ): Promise<MovedTable[] | PgError> {
    const shared = this.#shared;
    const reachable = shared?.reachable();
    let regions =
      reachable === undefined
        ? this.store.topology.regionIds
        : this.store.topology.regionIds.filter((region) => reachable.has(region));
    const every = this.store.topology.regionIds;
    const leave = (among: readonly RegionId[]): PgError | null =>
      leaveOut(every, shared?.need, this.store.directory, keys, to, among);
    let leases = new Map<RegionId, Lease>();
    let finished = false;
    try {
      const leftOut = leave(regions);
      if (leftOut !== null) return leftOut;
      // Regions are independent until the commit: each step that touches all of them runs in parallel.
      const begun = await beginEverywhere(
        this.runner,
        regions,
        this.settings.lockTimeoutMs,
        shared?.need === undefined ? undefined : shared.stepMs,
      );
      leases = begun.leases;
      if (begun.failed.size > 0) {
        // With one authority region every region takes part; with a majority, one that did not
        // begin in time is left out unless the move needs it.
        if (shared?.need === undefined) throw begun.failed.values().next().value;
        regions = regions.filter((region) => !begun.failed.has(region));
        const refused = leave(regions);
        if (refused !== null) return refused;
      }
      const on = (region: RegionId): Lease => leases.get(region)!;
      // Where the proxies agree, each entry gets a version above any there: of two regions' rows
      // for a key, the newer wins (a region left out now has the older one).
      const agreeing = regions.filter(
        (region) => shared?.authority === region || shared?.authority === "majority",
      );
      const { versions, newest } =
        shared === undefined
          ? {
              versions: new Map<string, number>(),
              newest: new Map<string, { region: RegionId; version: number }>(),
            }
          : await readEntries(shared.tables, agreeing, on, keys, (key) => shared.versionOf(key));
      // Left out regions, the entries the regions taking part hold now (this proxy's directory may
      // not have caught up with a peer's move yet) must name none of the regions left out.
      if (regions.length < every.length)
        for (const [key, entry] of newest)
          if (!regions.includes(entry.region))
            return moveNeedsRegion(entry.region, `key ${JSON.stringify(key)} lives there`);
      const geo = this.store.geoTables;
      const order = orderTables(geo, (await query(on(to), foreignKeySql(geo))).rows);
      if (order.outside !== undefined)
        return outsideForeignKey(order.outside.child, order.outside.parent, to);

      const holders = await this.whereRowsAre(keys, regions, on);
      if (holders instanceof PgError) return holders;
      const sources = new Map<RegionId, string[]>();
      for (const key of keys) {
        const from = holders.get(key);
        if (from === undefined || from === to) continue;
        const list = sources.get(from) ?? [];
        list.push(key);
        sources.set(from, list);
      }
      const moved = await copyRows(order.tables, sources, on, to);
      if (moved instanceof PgError) return moved;
      const entry = this.store.table.moveSql(keys, to);
      await Promise.all(
        regions.map((region) =>
          query(on(region), agreeing.includes(region) ? shared!.tables.moveSql(keys, to, versions) : entry),
        ),
      );
      const participants: Participant[] = regions.map((region) => ({
        region,
        query: async (sql: string) => {
          const result = await query(on(region), sql);
          return { rows: result.rows, command: result.tag };
        },
        // A commit step left unanswered: the connection's state is unknown, so it is never pooled.
        abandon: () => on(region).connection.destroy(),
      }));
      const readsHeld = await holdReads();
      if (readsHeld !== null) return readsHeld;
      const coordinator = await this.coordinator();
      progress.committing = true;
      const result = await coordinator.commit(participants);
      finished = true;
      for (const key of keys) this.store.directory.assign(key, to);
      shared?.assigned(keys, result.outcome === "committed" ? { to, versions } : undefined);
      // The regions left out get the new entries when they answer (their visits catch them up too).
      if (shared?.need !== undefined && result.outcome === "committed")
        for (const region of this.store.topology.regionIds)
          if (!regions.includes(region))
            shared.catchUp(
              region,
              keys.map((key) => [key, to, versions.get(key) ?? 1] as const),
            );
      this.log.info({ keys: keys.length, to, gid: result.gid, outcome: result.outcome }, "keys moved");
      if (moved.length === 0) {
        return this.store.geoTables.map((table) => ({
          table: table.table,
          from: sourceName(keys, holders, this.store),
          to,
          rows: 0,
          state: result.outcome === "committed" ? "moved" : "in-doubt",
        }));
      }
      return result.outcome === "committed" ? moved : moved.map((row) => ({ ...row, state: "in-doubt" }));
    } catch (error) {
      return this.failure(error);
    } finally {
      await this.finish(leases, finished);
    }
  }

  /** Where each key's rows are; a key in two regions refuses the move. Keys with no rows: none. */
  private async whereRowsAre(
    keys: readonly string[],
    regions: readonly RegionId[],
    on: (region: RegionId) => Lease,
  ): Promise<Map<string, RegionId> | PgError> {
    const geo = this.store.geoTables;
    const probe = geo
      .map(
        (table) =>
          `SELECT DISTINCT ${ident(table.key)}::text AS key FROM ${qualified(table.table)} WHERE ${ident(table.key)} ${inList(keys)}`,
      )
      .join(" UNION ");
    const found = new Map<string, RegionId[]>();
    const answers = await Promise.all(regions.map((region) => query(on(region), probe)));
    for (const [index, region] of regions.entries()) {
      for (const row of answers[index]!.rows) {
        const key = row["key"];
        if (key == null) continue;
        const list = found.get(key) ?? [];
        list.push(region);
        found.set(key, list);
      }
    }
    const holders = new Map<string, RegionId>();
    for (const [key, list] of found) {
      if (list.length > 1) return keyInSeveralRegions(key, list);
      holders.set(key, list[0]!);
    }
    return holders;
  }

  private failure(error: unknown): PgError {
    const code = (error as { code?: unknown }).code;
    if (code === SqlState.lock_not_available)
      return moveLockTimeout("a transaction holds the key's tables", this.settings.lockTimeoutMs);
    if (error instanceof PgError) return error;
    if (typeof code === "string" && error instanceof Error)
      return moveAbandoned(error as Error & { code: string; hint?: string; detail?: string });
    this.log.error({ err: error }, "move failed");
    return moveFailed(error);
  }

  /** Rolls back what did not commit, and gives the connections back (a doubtful one is closed). */
  private async finish(leases: Map<RegionId, Lease>, committed: boolean): Promise<void> {
    await Promise.all(
      [...leases.values()].map(async (lease) => {
        if (!committed && lease.connection.txStatus !== "I") {
          await query(lease, "ROLLBACK").catch(() => undefined);
        }
        if (lease.connection.txStatus !== "I") lease.discard("left inside a move's transaction");
        else lease.release();
      }),
    );
  }
}

function sourceName(keys: readonly string[], holders: Map<string, RegionId>, store: DirectoryStore): string {
  const regions = new Set(keys.map((key) => holders.get(key) ?? store.directory.lookup(key) ?? "-"));
  return [...regions].sort().join(",");
}
