import type { RegionId } from "@geo/core";
import { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import { createRacing } from "./directory-store.js";
import type { Quorum } from "./quorum.js";
import type { SqlRows } from "./region-runner.js";
import { type SharedTables, snapshotXmin } from "./shared-tables.js";
import type { RegionVisit } from "./visit-merge.js";

/** Entries written to a region that is behind, per statement. */
const CATCH_UP_BATCH = 1000;

/**
 * A visit's part in each region where the proxies agree: the shared tables created there (once,
 * and again when the region lost them), the snapshot the next read starts from, which regions
 * must be read whole (one that missed a read, with a majority, may have missed steps; one that
 * lost its tables, or whose snapshot went back, may hold anything), and the writes that catch a
 * region up with what it missed.
 */
export class RegionReads {
  /** Regions the shared tables were created in by this proxy. */
  readonly #created = new Set<RegionId>();
  /** Per region, the last applied visit's snapshot there: the next visit reads the rows it did not see. */
  readonly #fromSnapshot = new Map<RegionId, string>();
  /** Regions whose last read failed, or whose whole read is not applied yet: read whole when they answer. */
  readonly #missed = new Set<RegionId>();
  /** Writes to regions that were behind, running beside the visits. */
  #catchingUp: Promise<void> | undefined;

  constructor(
    private readonly quorum: Quorum,
    private readonly tables: SharedTables,
    private readonly log: Logger,
    /** Told each move this node announced in an earlier run, found where the tables are created. */
    private readonly ownMove: (id: string) => void,
  ) {}

  /** The heartbeat in `region`, the shared tables created there first when they are not yet (or were lost). */
  async beat(region: RegionId, heartbeatSql: () => string, node: string): Promise<SqlRows> {
    if (!this.#created.has(region)) await this.#create(region, node);
    try {
      return await this.quorum.in(region, heartbeatSql());
    } catch (error) {
      // A region restored without the shared tables (or that lost them in a crash) gets them
      // again; what it held is gone, so it is read whole and caught up.
      if (!(error instanceof PgError && error.code === "42P01")) throw error;
      this.#missed.add(region);
      await this.#create(region, node);
      return this.quorum.in(region, heartbeatSql());
    }
  }

  /**
   * `region`'s part of a visit: the rows changed since its last applied snapshot (and `reread`),
   * or every row when it must be read whole; a snapshot that went back (restored, or failed over
   * to a server behind) is read whole again at once: it may hold rows under ids the last one saw.
   */
  async read(region: RegionId, reread: readonly string[], listed: readonly string[]): Promise<RegionVisit> {
    try {
      const from = this.#missed.has(region) ? null : (this.#fromSnapshot.get(region) ?? null);
      let read = (await this.quorum.in(region, this.tables.visitSql(from, reread, listed))).rows[0] ?? {};
      if (from !== null && read["snapshot"] != null && snapshotXmin(read["snapshot"]) < snapshotXmin(from)) {
        read = (await this.quorum.in(region, this.tables.visitSql(null, [], listed))).rows[0] ?? {};
        return { region, full: true, read };
      }
      return { region, full: from === null, read };
    } catch (error) {
      const lost = error instanceof PgError && error.code === "42P01";
      if (lost) this.#created.delete(region);
      // With a majority, a region that did not answer may miss steps the others took: read whole
      // when back. One authority region missed nothing; it is read from its last snapshot.
      if (lost || this.quorum.majority) this.#missed.add(region);
      throw error;
    }
  }

  /** The visits whose answers were applied: their snapshots are where the next reads start. */
  applied(visits: readonly RegionVisit[]): void {
    for (const visit of visits) {
      if (visit.full) this.#missed.delete(visit.region);
      if (visit.read["snapshot"] != null) this.#fromSnapshot.set(visit.region, visit.read["snapshot"]);
    }
  }

  /**
   * A region a move left out: it is sent the move's entries now (if it answers), and read whole
   * at the next visit that hears from it, which catches up whatever else it lacks.
   */
  leftOut(region: RegionId, rows: readonly (readonly [string, RegionId, number])[]): void {
    this.#missed.add(region);
    void this.quorum.in(region, this.tables.catchUpSql(rows)).catch(() => undefined);
  }

  /**
   * Writes to the regions a visit found behind what they missed while out of reach: the newest
   * entries, and the withdrawals of moves they still list. Runs beside the visits, one at a time;
   * what it leaves undone the next visit finds again.
   */
  catchUp(
    behind: ReadonlyMap<RegionId, [string, RegionId, number][]>,
    revived: ReadonlyMap<RegionId, string[]>,
  ): void {
    if (this.#catchingUp !== undefined || (behind.size === 0 && revived.size === 0)) return;
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
        this.log.info(
          { region, entries: rows.length },
          "a region that was out of reach has the directory entries it missed",
        );
      }
    })()
      .catch((error: unknown) =>
        this.log.warn({ err: error }, "catching a region up failed; tried again later"),
      )
      .finally(() => {
        this.#catchingUp = undefined;
      });
  }

  /** Resolves once the catch-up under way (if any) is done. */
  async idle(): Promise<void> {
    await this.#catchingUp;
  }

  async #create(region: RegionId, node: string): Promise<void> {
    // Proxies starting together race on CREATE ... IF NOT EXISTS.
    await createRacing(() => this.quorum.in(region, this.tables.createSql()));
    const own = await this.quorum.in(region, this.tables.ownMovesSql(node));
    for (const row of own.rows) if (row["id"] != null) this.ownMove(row["id"]);
    this.#created.add(region);
  }
}
