import type { DirectoryStoreConfig } from "@geo/core";
import type { Logger } from "../log.js";
import type { Hold, HoldRegistry } from "../moves/hold-registry.js";
import type { Announcement } from "./peer-view.js";
import type { Quorum } from "./quorum.js";
import type { MoveStep, SharedTables } from "./shared-tables.js";

export interface FollowedMovesOptions {
  readonly node: string;
  readonly store: DirectoryStoreConfig;
  readonly tables: SharedTables;
  readonly holds: HoldRegistry;
  /** Where the proxies agree: a confirmation or a withdrawal is taken there (each region bounded by lease_ms). */
  readonly quorum: Quorum;
  /** True once a recovery pass begun after the call found every move this node prepared settled. */
  readonly settled: () => Promise<boolean>;
  /**
   * With a majority: reads the keys' entries again from a majority, before a withdrawn move's
   * hold ends; false when no majority answered (the hold stays until a later visit).
   */
  readonly refresh?: (keys: readonly string[]) => Promise<boolean>;
  readonly log: Logger;
}

interface FollowedMove {
  readonly hold: Hold;
  /** The step this proxy confirmed holding (0: none yet). */
  confirmed: number;
  confirming: boolean;
  /** This node's own move awaiting withdrawal: held until this node withdraws it. */
  own?: boolean;
}

/**
 * The announced moves whose keys this proxy holds: other proxies' moves, from the visit that
 * finds one until the visit that finds it withdrawn. While the mover copies, writes of the keys
 * wait and the move is confirmed once no write admitted before the hold still runs; once the
 * mover asks for the second step, reads wait too and it is confirmed again once no read admitted
 * before still runs; and this proxy's own moves left in doubt or by an earlier run,
 * until a recovery pass begun after them finds them settled and they are withdrawn.
 */
export class FollowedMoves {
  readonly #options: FollowedMovesOptions;
  readonly #followed = new Map<string, FollowedMove>();
  /** This node's own announcements to withdraw once its moves are settled (an earlier run's, or in doubt). */
  readonly #withdrawals = new Set<string>();
  #withdrawing: Promise<void> | undefined;

  constructor(options: FollowedMovesOptions) {
    this.#options = options;
  }

  /** Whether this proxy holds the keys of move `id` now. */
  has(id: string): boolean {
    return this.#followed.has(id);
  }

  /**
   * An announcement of this node's to withdraw once its moves are settled. Its keys stay held
   * here meanwhile, as the peers hold them: a move left in doubt may still commit.
   */
  withdrawLater(id: string, keys?: readonly string[]): void {
    this.#withdrawals.add(id);
    if (keys === undefined) return;
    if (!this.#followed.has(id))
      this.#followed.set(id, { hold: this.#options.holds.hold(keys), confirmed: 2, confirming: false });
    this.#followed.get(id)!.own = true;
  }

  /**
   * A visit's announced moves: withdrawn ones let go, new ones held (and confirmed when another
   * proxy's). Resolves once the statements a withdrawal let go have been admitted.
   */
  async follow(moves: readonly Announcement[]): Promise<void> {
    const { node, holds } = this.#options;
    const live = new Set(moves.map((move) => move.id));
    // Withdrawn: the move's entries (committed before it was withdrawn) were applied before this.
    let released = false;
    const ended = [...this.#followed].filter(
      ([id, followed]) => !live.has(id) && !(followed.own === true && this.#withdrawals.has(id)),
    );
    // The region that showed a withdrawal may be one the move left out, without its new entry:
    // the entries are read again from a majority (which the move's commit reached), all at once.
    const refresh = this.#options.refresh;
    const refreshed =
      ended.length === 0 ||
      refresh === undefined ||
      (await refresh([...new Set(ended.flatMap(([, followed]) => [...followed.hold.keys]))]));
    if (refreshed)
      for (const [id, followed] of ended) {
        followed.hold.release();
        this.#followed.delete(id);
        released = true;
      }
    // The statements a withdrawal lets go are admitted before a new announcement holds the keys
    // again (its confirmation then waits for them): back-to-back moves of a key cannot starve them.
    if (released && moves.some((move) => !this.#followed.has(move.id)))
      await new Promise((resolve) => setImmediate(resolve));
    for (const move of moves) {
      let followed = this.#followed.get(move.id);
      if (followed === undefined) {
        // This node's own live moves hold their keys themselves; an earlier run's are held here.
        if (move.mover === node && !this.#withdrawals.has(move.id)) continue;
        // While the mover copies, only writes wait; an earlier run's move, in doubt, holds all.
        const mode = move.mover === node || move.step >= 2 ? "all" : "writes";
        followed = {
          hold: holds.hold(move.keys, mode),
          confirmed: move.confirmedBy.includes(node) ? move.step : 0,
          confirming: false,
        };
        this.#followed.set(move.id, followed);
      }
      // The copy is done: reads wait too from now on, and the mover waits for a second confirmation.
      if (move.step >= 2) followed.hold.holdReads();
      // A confirmation that failed or timed out is tried again at the next visit; so is one the
      // regions read do not show (it may have landed only where the mover does not read).
      const shown = move.confirmedBy.includes(node);
      if (move.mover !== node && (followed.confirmed < move.step || !shown) && !followed.confirming)
        void this.#confirm(move, followed);
    }
  }

  /** After a visit: withdraws settled moves in the background (a recovery pass may be slow). */
  withdrawSettled(): void {
    if (this.#withdrawals.size > 0) this.#withdrawing ??= this.#withdraw();
  }

  /** This node's announcements still to withdraw: the proxy must not leave the peers with them. */
  get pending(): number {
    return this.#withdrawals.size;
  }

  /** Lets every key go (the proxy stops). */
  async close(): Promise<void> {
    await this.#withdrawing;
    for (const move of this.#followed.values()) move.hold.release();
    this.#followed.clear();
  }

  /**
   * Confirms a move's step once no statement its hold stops (writes; at step 2, reads too)
   * admitted before the hold still runs on its keys.
   */
  async #confirm(move: Announcement, followed: FollowedMove): Promise<void> {
    const { holds, store, log, tables, node } = this.#options;
    const step: MoveStep = move.step >= 2 ? 2 : 1;
    followed.confirming = true;
    try {
      if (!(await holds.drained(followed.hold, store.lockTimeoutMs))) {
        log.warn(
          { move: move.id, mover: move.mover },
          "statements on a key another proxy moves are still running: the move is not confirmed yet",
        );
        return;
      }
      if (this.#followed.get(move.id) !== followed) return;
      await this.#options.quorum.run(tables.confirmSql(move.id, node, step));
      followed.confirmed = Math.max(followed.confirmed, step);
    } catch (error) {
      log.warn({ move: move.id, err: error }, "could not confirm a move to the shared directory's authority");
    } finally {
      followed.confirming = false;
    }
  }

  /**
   * Withdraws the announcements queued before a recovery pass that began after them found this
   * node's moves settled; one queued meanwhile waits for the next pass.
   */
  async #withdraw(): Promise<void> {
    const ids = [...this.#withdrawals];
    try {
      if (!(await this.#options.settled())) return;
      await this.#options.quorum.run(this.#options.tables.withdrawSql(ids));
      // The holds end at the next visit, once it has applied the entries those moves committed
      // (recovery may have committed one just now, after this proxy's directory was read).
      for (const id of ids) {
        this.#withdrawals.delete(id);
        const followed = this.#followed.get(id);
        if (followed !== undefined) followed.own = false;
      }
    } catch (error) {
      this.#options.log.warn(
        { moves: ids, err: error },
        "could not withdraw settled moves; tried again at the next visit",
      );
    } finally {
      this.#withdrawing = undefined;
    }
  }
}
