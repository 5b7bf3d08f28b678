import { randomInt } from "node:crypto";
import type { RegionId } from "@geo/core";
import { PgError } from "@geo/proto";
import { serverErrorOf } from "../directory/quorum.js";
import type { SqlRows } from "../directory/region-runner.js";
import type { SharedDirectory } from "../directory/shared-directory.js";
import { authorityUnreachable, keyMovedByPeer, peersDidNotConfirm } from "../directory/shared-errors.js";
import type { MoveStep } from "../directory/shared-tables.js";
import type { Logger } from "../log.js";

/** A move announced to the peers: withdrawn when it ends, so they let its keys go. */
export interface AnnouncedMove {
  readonly id: string;
  /**
   * The second step, once the rows are copied and before the commit: every live peer holds the
   * keys' reads too and confirms again. Null once they all did; the refusal otherwise (the move
   * is then withdrawn, and must not commit).
   */
  holdReads(): Promise<PgError | null>;
  /** `settled`: nothing of the move is left in doubt; else it is withdrawn once recovery settles it. */
  withdraw(settled: boolean): Promise<void>;
}

/** How often the mover reads the confirmations while it waits for them. */
const CONFIRM_POLL_MS = 20;

/**
 * The mover's side of a move through a shared directory. The announcement is committed in the
 * authority before the mover reads who must confirm it, and every proxy commits its heartbeat
 * before it reads the announcements: so a proxy the mover does not wait for has not yet read, and
 * will find the announcement when it does. A peer whose heartbeat is more than 1.5 x lease_ms
 * old is not waited for: by its own clock its lease ran out, and it routes these tables no more.
 * A move has two steps: while it copies, peers hold the keys' writes; before it commits, their
 * reads too, each confirmed by every live peer.
 */
export class MoveAnnouncer {
  constructor(
    private readonly shared: SharedDirectory,
    private readonly log: Logger,
  ) {}

  async announce(keys: readonly string[], to: RegionId): Promise<AnnouncedMove | PgError> {
    const refused = this.shared.refusal();
    if (refused !== null) return refused;
    const { tables, node, quorum } = this.shared;
    const where = quorum.where;
    // Chosen here, not by the table's sequence: an announcement whose answer is lost can still be
    // withdrawn by its id (it may have committed).
    const id = String(randomInt(1, 2 ** 47));
    try {
      await quorum.run(tables.announceSql(id, node, keys, to));
    } catch (error) {
      // Nothing was done under it, though with a majority some regions may list it: withdrawn
      // now, or held here and withdrawn at a later visit.
      await quorum.run(tables.withdrawSql([id])).catch(() => this.shared.withdrawLater(id, keys));
      // 23505: another announcement of one of the keys stands (this proxy's or a peer's).
      if (serverErrorOf(error, "23505") !== undefined) return this.#heldBy(keys);
      return authorityUnreachable(where, messageOf(error));
    }
    const announced: AnnouncedMove = {
      id,
      holdReads: async () => {
        try {
          // Counted only where the announcement is: a peer reading a majority must find step 2.
          await quorum.run(tables.stepSql(id, 2), (answer) => answer.rows.length > 0);
          const refused = await this.#confirmed(id, 2);
          if (refused === null) return null;
          await announced.withdraw(true);
          return refused;
        } catch (error) {
          await announced.withdraw(true);
          return error instanceof PgError ? error : authorityUnreachable(where, messageOf(error));
        }
      },
      withdraw: async (settled) => {
        if (!settled) {
          this.shared.withdrawLater(id, keys);
          return;
        }
        await quorum.run(tables.withdrawSql([id])).catch((error: unknown) => {
          this.log.warn(
            { move: id, err: error },
            "could not withdraw a move's announcement; it is withdrawn at a later visit",
          );
          this.shared.withdrawLater(id, keys);
        });
      },
    };
    try {
      const refused = await this.#confirmed(id, 1);
      if (refused === null) return announced;
      await announced.withdraw(true);
      return refused;
    } catch (error) {
      await announced.withdraw(true);
      return error instanceof PgError ? error : authorityUnreachable(where, messageOf(error));
    }
  }

  /**
   * Waits until every live peer confirmed `step` of move `id`; null then, or the refusal once
   * lock_timeout_ms + 2 x poll_ms passed with one missing. Throws when the regions do not answer.
   */
  async #confirmed(id: string, step: MoveStep): Promise<PgError | null> {
    const { tables, node, quorum, config } = this.shared;
    const waitMs = config.lockTimeoutMs + 2 * config.pollMs;
    const deadline = performance.now() + waitMs;
    for (;;) {
      const missing = confirmationsOf((await quorum.run(tables.confirmationsSql(id, step))).values())
        .filter((peer) => peer.node !== node && !peer.confirmed && peer.ageMs < 1.5 * config.leaseMs)
        .map((peer) => peer.node);
      if (missing.length === 0) return null;
      if (performance.now() >= deadline) return peersDidNotConfirm(missing, waitMs);
      await new Promise((resolve) => setTimeout(resolve, CONFIRM_POLL_MS));
    }
  }

  /** The refusal of a move whose keys another announced move has: names that move's proxy. */
  async #heldBy(keys: readonly string[]): Promise<PgError> {
    const holder = await this.shared.quorum
      .run(this.shared.tables.movingSql(keys))
      .then((answers) => [...answers.values()].find((answer) => answer.rows.length > 0)?.rows[0]?.["mover"])
      .catch(() => undefined);
    return keyMovedByPeer(keys, holder ?? "another proxy");
  }
}

/**
 * The peers as the regions that answered see them together: a heartbeat's youngest age (the
 * majority a peer's last heartbeat reached shares a region with those that answered), and a
 * confirmation wherever it was written.
 */
function confirmationsOf(answers: Iterable<SqlRows>): { node: string; ageMs: number; confirmed: boolean }[] {
  const peers = new Map<string, { node: string; ageMs: number; confirmed: boolean }>();
  for (const answer of answers)
    for (const row of answer.rows) {
      const node = row["node"] ?? "?";
      const ageMs = Number(row["age_ms"]);
      const confirmed = row["confirmed"] === "t";
      const seen = peers.get(node);
      if (seen === undefined) peers.set(node, { node, ageMs, confirmed });
      else
        peers.set(node, { node, ageMs: Math.min(seen.ageMs, ageMs), confirmed: seen.confirmed || confirmed });
    }
  return [...peers.values()];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
