import type { Lease } from "@geo/pool";
import type { Frame, PgError } from "@geo/proto";
import { Leg } from "../executor/leg.js";

/**
 * Why a session keeps a connection beyond the statement on it:
 * - `pinned`: the session's state lives there (a temp table, LISTEN, a WITH HOLD cursor, an
 *   advisory lock, session pooling); at most one.
 * - `block`: the open transaction block's connection in its region.
 * - `batch` / `replica-batch`: used by the extended-protocol batch in flight outside a block,
 *   given back at its Sync (a primary's and a replica's connection of one region may both be held).
 * - `scatter`: read by a read across regions (src/scatter/) while it runs, its frames diverted
 *   from the relay to the scatter's region channel; a block's connection can have it too.
 */
export type LegRole = "pinned" | "block" | "batch" | "replica-batch" | "scatter";

/**
 * The only owner of a session's backend connections, scatter's included. Every connection the
 * session checks out is opened here and goes back to its pool only from here, once no role keeps
 * it and no answer is owed on it: the backend has sent ReadyForQuery for every Query and Sync
 * written, with the session's block not open there. A connection that still owes one when nobody
 * is left to read it (the relay has no answer queued for it), or that a cancel was aimed at, is
 * closed instead. Roles are marks on one record per connection rather than separate collections,
 * so a connection cannot be forgotten by one collection while another still uses it.
 */
export class LegSet {
  private readonly held = new Map<Leg, Set<LegRole>>();
  /** The connection last written to: before another is used, its answers must be complete. */
  active: Leg | null = null;
  readonly block = new RegionRole(this, "block");
  readonly batch = new RegionRole(this, "batch");
  readonly replicaBatch = new RegionRole(this, "replica-batch");

  constructor(
    private readonly onFrame: (leg: Leg, frame: Frame) => void,
    private readonly onBroken: (leg: Leg, error: PgError) => void,
  ) {}

  /** Takes a checked-out connection into the set, with no role yet (`replica`: a replica's `host:port`). */
  open(region: string, lease: Lease, replica?: string): Leg {
    const leg = new Leg(
      region,
      lease,
      this.onFrame,
      (broken, error) => this.onBroken(broken, error),
      replica,
    );
    this.held.set(leg, new Set());
    return leg;
  }

  /** How many connections the session holds, whatever for. */
  get size(): number {
    return this.held.size;
  }

  get pinned(): Leg | null {
    for (const [leg, roles] of this.held) if (roles.has("pinned")) return leg;
    return null;
  }

  pin(leg: Leg): void {
    const current = this.pinned;
    if (current !== null && current !== leg) this.unmark(current, "pinned");
    this.mark(leg, "pinned");
  }

  /** The session no longer needs its pinned connection; it stays held until `release`. */
  unpin(): Leg | null {
    const leg = this.pinned;
    if (leg !== null) this.unmark(leg, "pinned");
    return leg;
  }

  has(leg: Leg, role: LegRole): boolean {
    return this.held.get(leg)?.has(role) === true;
  }

  mark(leg: Leg, role: LegRole): void {
    let roles = this.held.get(leg);
    if (roles === undefined) {
      roles = new Set();
      this.held.set(leg, roles);
    }
    roles.add(role);
  }

  unmark(leg: Leg, role: LegRole): void {
    this.held.get(leg)?.delete(role);
  }

  /** Every connection held with `role`, oldest first. */
  withRole(role: LegRole): Leg[] {
    const legs: Leg[] = [];
    for (const [leg, roles] of this.held) if (roles.has(role)) legs.push(leg);
    return legs;
  }

  /** Every connection the session holds, whatever for. */
  all(): Leg[] {
    return [...this.held.keys()];
  }

  /**
   * Gives a connection back once it is not needed: kept while pinned, in the block, read by a
   * scatter or with answers outstanding. A batch's mark does not keep it (the batch ended, or the
   * caller knows better).
   */
  release(leg: Leg): void {
    const roles = this.held.get(leg);
    // Not held: already given back, or lost.
    if (roles === undefined || roles.has("pinned") || roles.has("block") || roles.has("scatter")) return;
    if (leg.outstanding > 0) {
      // Asked again once its last answer is in, after that answer's own effects ran (one of
      // them may give the connection a role again: a statement that left a block open).
      leg.whenIdle(() => queueMicrotask(() => this.release(leg)));
      return;
    }
    this.forget(leg);
    this.giveBack(leg, false);
  }

  /**
   * The return rule, in one place: a connection whose backend still owes a ReadyForQuery (a
   * statement running, an answer unread) would answer the next client with this one's rows, so it
   * is closed; a cancelled one is closed too (the cancel may land late). One outside an idle
   * transaction status is reset in full.
   */
  private giveBack(leg: Leg, full: boolean): void {
    const connection = leg.connection;
    if (leg.broken === null && !leg.retire && !connection.isQuiescent) leg.retire = true;
    leg.release(full || connection.txStatus !== "I");
  }

  /** Gives a connection back whatever marks it has, reset in full when `full` (or closed when unusable). */
  discard(leg: Leg, full: boolean): void {
    this.forget(leg);
    this.giveBack(leg, full);
  }

  /** The connection broke: it leaves the set, and the roles it had are returned. */
  lost(leg: Leg): ReadonlySet<LegRole> {
    const roles = this.held.get(leg) ?? new Set<LegRole>();
    this.forget(leg);
    return roles;
  }

  /**
   * Removes every connection from the set and returns them (the session is closing). A scatter's
   * connections stay, with only that role: the scatter is still reading them (the session's
   * cancel hooks stopped what ran there), and once it stops, `release` closes or returns them as
   * any other. Handing them back now would lend a connection the scatter still writes to.
   */
  drain(): Leg[] {
    const legs: Leg[] = [];
    for (const [leg, roles] of this.held) {
      if (roles.has("scatter")) {
        roles.clear();
        roles.add("scatter");
        continue;
      }
      legs.push(leg);
      this.held.delete(leg);
    }
    this.active = null;
    return legs;
  }

  private forget(leg: Leg): void {
    this.held.delete(leg);
    if (this.active === leg) this.active = null;
  }
}

/** The connections of one role, at most one per region: a view of the set, not a collection of its own. */
export class RegionRole {
  constructor(
    private readonly set: LegSet,
    private readonly role: Exclude<LegRole, "pinned">,
  ) {}

  get(region: string): Leg | undefined {
    for (const leg of this.set.withRole(this.role)) if (leg.region === region) return leg;
    return undefined;
  }

  has(region: string): boolean {
    return this.get(region) !== undefined;
  }

  /** Marks `leg` for its region, unmarking the one marked there before. */
  add(leg: Leg): void {
    const previous = this.get(leg.region);
    if (previous !== undefined && previous !== leg) this.set.unmark(previous, this.role);
    this.set.mark(leg, this.role);
  }

  delete(region: string): void {
    const leg = this.get(region);
    if (leg !== undefined) this.set.unmark(leg, this.role);
  }

  /** Unmarks every connection of the role (they stay held until released). */
  clear(): Leg[] {
    const legs = this.set.withRole(this.role);
    for (const leg of legs) this.set.unmark(leg, this.role);
    return legs;
  }

  get size(): number {
    return this.set.withRole(this.role).length;
  }

  values(): Leg[] {
    return this.set.withRole(this.role);
  }

  regions(): string[] {
    return this.values().map((leg) => leg.region);
  }
}
