import { randomInt } from "node:crypto";
import type { RegionId } from "@geo/core";
import { PgError } from "@geo/proto";
import type { SharedDirectory } from "../directory/shared-directory.js";
import { authorityUnreachable, keyMovedByPeer, peersDidNotConfirm } from "../directory/shared-errors.js";
import type { Logger } from "../log.js";

/** A move announced to the peers: withdrawn when it ends, so they let its keys go. */
export interface AnnouncedMove {
  readonly id: string;
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
 */
export class MoveAnnouncer {
  constructor(
    private readonly shared: SharedDirectory,
    private readonly log: Logger,
  ) {}

  async announce(keys: readonly string[], to: RegionId): Promise<AnnouncedMove | PgError> {
    const refused = this.shared.refusal();
    if (refused !== null) return refused;
    const { tables, node, authority, config } = this.shared;
    // Chosen here, not by the table's sequence: an announcement whose answer is lost can still be
    // withdrawn by its id (it may have committed).
    const id = String(randomInt(1, 2 ** 47));
    try {
      await this.shared.ask(tables.announceSql(id, node, keys, to));
    } catch (error) {
      // 23505: another announcement of one of the keys stands (this proxy's or a peer's).
      if (error instanceof PgError && error.code === "23505") return this.#heldBy(keys);
      // Nothing was done under it: withdrawn now, or held here and withdrawn at a later visit.
      await this.shared.ask(tables.withdrawSql([id])).catch(() => this.shared.withdrawLater(id, keys));
      return authorityUnreachable(authority, messageOf(error));
    }
    const announced: AnnouncedMove = {
      id,
      withdraw: async (settled) => {
        if (!settled) {
          this.shared.withdrawLater(id, keys);
          return;
        }
        await this.shared.ask(tables.withdrawSql([id])).catch((error: unknown) => {
          this.log.warn(
            { move: id, err: error },
            "could not withdraw a move's announcement; it is withdrawn at a later visit",
          );
          this.shared.withdrawLater(id, keys);
        });
      },
    };
    try {
      const waitMs = config.lockTimeoutMs + 2 * config.pollMs;
      const deadline = performance.now() + waitMs;
      for (;;) {
        const rows = (await this.shared.ask(tables.confirmationsSql(id))).rows;
        const missing = rows
          .filter((row) => row["node"] !== node && row["confirmed"] !== "t")
          .filter((row) => Number(row["age_ms"]) < 1.5 * config.leaseMs)
          .map((row) => row["node"] ?? "?");
        if (missing.length === 0) return announced;
        if (performance.now() >= deadline) {
          await announced.withdraw(true);
          return peersDidNotConfirm(missing, waitMs);
        }
        await new Promise((resolve) => setTimeout(resolve, CONFIRM_POLL_MS));
      }
    } catch (error) {
      await announced.withdraw(true);
      return error instanceof PgError ? error : authorityUnreachable(authority, messageOf(error));
    }
  }

  /** The refusal of a move whose keys another announced move has: names that move's proxy. */
  async #heldBy(keys: readonly string[]): Promise<PgError> {
    const holder = await this.shared
      .ask(this.shared.tables.movingSql(keys))
      .then((answer) => answer.rows[0]?.["mover"] ?? undefined)
      .catch(() => undefined);
    return keyMovedByPeer(keys, holder ?? "another proxy");
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
