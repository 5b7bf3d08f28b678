import type { TransactionStatus } from "@geo/proto";
import type { RegionRole } from "../engine/leg-set.js";
import type { Leg } from "../executor/leg.js";
import type { SessionSettings } from "./session-settings.js";

/**
 * A transaction block as the client sees it, spread over at most one connection per region. It
 * is opened by the proxy on a region's connection only when a statement first goes there, by
 * replaying the client's BEGIN and the savepoints still open. When several regions are written
 * the block commits in two phases (src/distributed); regions only read end with a plain COMMIT.
 */
export class Transaction {
  /** The first region written: its answer to COMMIT is the client's when only it was written. */
  writeRegion: string | null = null;
  /** Every region written: more than one commits in two phases. */
  readonly writeRegions = new Set<string>();
  /** An extended-protocol batch that wrote in several regions: committed by the proxy at Sync. */
  endsAtSync = false;
  /** Failed by the proxy itself (a refused statement): everything but ROLLBACK gets 25P02. */
  failed = false;
  /**
   * SAVEPOINT statements still open, oldest first, with their names, the session's settings and
   * how many SET LOCALs the block had when each was made: ROLLBACK TO undoes later SETs.
   */
  readonly savepoints: { name: string; sql: string; settings: SessionSettings; localSettings: number }[] = [];
  /** Legs where the client's own SET/RESET ran inside this block: their settings change with its outcome. */
  readonly settingsLegs = new Set<Leg>();
  /**
   * SET LOCAL statements of this block, replayed on legs opened after them, with the search_path
   * each sets (null: none; `UNKNOWN_SEARCH_PATH` when its value cannot be read).
   */
  readonly localSettings: { readonly sql: string | null; readonly searchPath: readonly string[] | null }[] =
    [];

  constructor(
    /** The client's BEGIN, replayed on each region's connection. */
    readonly beginSql: string,
    /** A simple-query string's implicit block: ends with the string. */
    public implicit: boolean,
    /** The session's settings at BEGIN, restored on rollback. */
    readonly settingsBefore: SessionSettings,
    /** Its connections, one per region reached: the session's connections marked for the block. */
    readonly legs: RegionRole,
  ) {}

  /**
   * Set by the block's own ending or recovery while in flight: ROLLBACK TO sent (each leg's
   * ReadyForQuery count then), or a COMMIT/ROLLBACK sent in line in a pipeline. Until a leg's
   * next ReadyForQuery its old 'E' says nothing: the server has the statement that ends it.
   */
  private recoveredAt: Map<Leg, number> | null = null;
  /** A COMMIT or ROLLBACK of the block went to its server in line (pipeline): it is ending. */
  ending = false;

  get status(): TransactionStatus {
    if (this.failed) return "E";
    for (const leg of this.legs.values()) {
      if (leg.connection.txStatus !== "E") continue;
      const recoveredAt = this.recoveredAt?.get(leg);
      if (recoveredAt === undefined || recoveredAt !== leg.connection.readyCount) return "E";
    }
    return "T";
  }

  /** ROLLBACK TO is on its way to every leg: the failed state ends, as the server's will. */
  recovered(): void {
    this.failed = false;
    this.recoveredAt = new Map(this.legs.values().map((leg) => [leg, leg.connection.readyCount]));
  }

  /** The leg whose answer the client sees for statements run on every leg (COMMIT, SAVEPOINT). */
  primaryLeg(): Leg | undefined {
    if (this.writeRegion !== null) return this.legs.get(this.writeRegion);
    return this.legs.values()[0];
  }

  /** The statements that open this block on a new connection. */
  openingSql(): string {
    return [
      this.beginSql,
      ...this.savepoints.map((savepoint) => savepoint.sql),
      ...this.localSettings.flatMap((setting) => (setting.sql === null ? [] : [setting.sql])),
    ].join("; ");
  }

  /** The search_path a SET LOCAL of this block set last (what the block now searches), if any. */
  localSearchPath(): readonly string[] | undefined {
    for (let i = this.localSettings.length - 1; i >= 0; i--) {
      const searchPath = this.localSettings[i]!.searchPath;
      if (searchPath !== null) return searchPath;
    }
    return undefined;
  }

  /**
   * Settles the settings knowledge of the legs where the client's SETs ran: after a commit they
   * hold the session's settings; after a rollback PostgreSQL undid them, so the pool resets them.
   */
  settleSettings(committed: boolean, markApplied: (applied: Map<string, string>) => void): void {
    for (const leg of this.settingsLegs) {
      if (leg.broken !== null) continue;
      if (committed) markApplied(leg.connection.appliedSettings);
      else {
        leg.connection.appliedSettings.clear();
        leg.connection.markDirty("settings");
      }
    }
  }

  savepoint(name: string, sql: string, settings: SessionSettings): void {
    this.savepoints.push({ name, sql, settings, localSettings: this.localSettings.length });
  }

  /**
   * RELEASE drops the savepoint and every later one; ROLLBACK TO keeps it, drops the SET LOCALs
   * made after it and returns the session's settings as they were when it was made (PostgreSQL
   * undoes SETs made after a savepoint rolled back to). Undefined when no savepoint has the name.
   */
  unwindTo(name: string, keep: boolean): SessionSettings | undefined {
    for (let i = this.savepoints.length - 1; i >= 0; i--) {
      const savepoint = this.savepoints[i]!;
      if (savepoint.name === name) {
        this.savepoints.splice(keep ? i + 1 : i);
        if (!keep) return undefined;
        this.localSettings.splice(savepoint.localSettings);
        return savepoint.settings.snapshot();
      }
    }
    return undefined;
  }
}
