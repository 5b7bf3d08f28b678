import type { Lease } from "@geo/pool";
import { encodeQuery, PgError, SqlState } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { clientGone, internalError } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import { regionLost } from "./errors.js";
import { RegionChannel } from "./region-channel.js";

/** The failure was already sent to the client (by the session, opening a region's transaction). */
export class AlreadyReported extends Error {
  constructor() {
    super("already reported to the client");
  }
}

/**
 * A region's connection for one scatter: a leg of the session's `LegSet` with the `scatter` role,
 * its frames read through `channel`. `release` gives it back to the set, which alone decides
 * whether it goes to the pool (every ReadyForQuery in, not cancelled) or is closed.
 */
export interface RegionConnection {
  readonly region: string;
  readonly channel: RegionChannel;
  /** Ends the scatter's hold: the frames go back to the relay, and the set releases the leg. */
  release(): void;
}

function connectFailure(region: string, error: unknown): PgError {
  if (error instanceof PgError) {
    return error.code.startsWith("08") || error.code === SqlState.admin_shutdown
      ? regionLost(region, error)
      : error;
  }
  return internalError(error);
}

/**
 * Outside a transaction each region gets a connection of its own from the pool (all at once),
 * taken into the session's `LegSet` and made to hold the client's session settings first. Inside
 * one, the transaction's leg in that region is used (opened with the transaction's BEGIN if the
 * block had not reached it yet), so the scatter reads what the block wrote and its snapshot.
 */
export async function openRegions(
  session: SessionPort,
  regions: readonly string[],
  mode: StatementMode,
): Promise<RegionConnection[]> {
  if (session.txn !== null) return openInTransaction(session, regions, mode);
  // Checked out one at a time in one global order: two scatters never each hold a region the
  // other waits for (a full pool would otherwise stall both until the checkout timeout).
  const leases = new Map<string, Lease>();
  try {
    for (const region of [...regions].sort()) {
      try {
        leases.set(
          region,
          await session.runtime.pools.acquireForSession(region, session.user, session.database),
        );
      } catch (error) {
        throw connectFailure(region, error);
      }
    }
    // The client left while the checkouts waited: its set was emptied, nobody would give them back.
    if (session.phase === "closed") throw clientGone();
  } catch (error) {
    for (const lease of leases.values()) lease.release();
    throw error;
  }
  return regions.map((region) => prepare(session, region, leases.get(region)!));
}

/**
 * Makes the connection hold the client's session settings: the replay is written ahead of the
 * statements and read with their answers, so it costs no round trip of its own. A failed replay
 * fails the region's part; the connection then goes back to be reset.
 */
function prepare(session: SessionPort, region: string, lease: Lease): RegionConnection {
  const legs = session.legs;
  const leg = legs.open(region, lease);
  legs.mark(leg, "scatter");
  const connection = lease.connection;
  const channel = new RegionChannel(leg);
  const replay = session.settings.replayFor(connection.appliedSettings);
  let replayFailed = false;
  if (replay !== null) {
    session.settings.markApplied(connection.appliedSettings);
    channel.prelude(encodeQuery({ sql: replay }), () => {
      replayFailed = true;
      connection.appliedSettings.clear();
    });
  }
  return {
    region,
    channel,
    release() {
      channel.detach();
      legs.unmark(leg, "scatter");
      // Part of the settings may hold: reset in full before anyone else has it.
      if (replayFailed) legs.discard(leg, true);
      else legs.release(leg);
    },
  };
}

async function openInTransaction(
  session: SessionPort,
  regions: readonly string[],
  mode: StatementMode,
): Promise<RegionConnection[]> {
  const legs: Leg[] = [];
  const errorsBefore = session.relay.errorsSent;
  for (const region of regions) {
    const held = session.txn?.legs.get(region);
    if (held !== undefined) {
      legs.push(held);
      continue;
    }
    const leg = await session.legFor(region, false, mode);
    if (leg instanceof PgError) throw connectFailure(region, leg);
    legs.push(leg);
  }
  await session.quiesceActive();
  await session.relay.idle();
  for (const leg of legs) {
    if (leg.broken !== null) throw regionLost(leg.region, leg.broken);
  }
  if (session.relay.errorsSent > errorsBefore) throw new AlreadyReported();
  return legs.map((leg) => {
    // The block keeps the leg (its `block` role); the scatter only reads it for a while. A
    // cancel aimed at it retires it (RegionChannel.cancel), so the block's end closes it.
    session.legs.mark(leg, "scatter");
    const channel = new RegionChannel(leg);
    return {
      region: leg.region,
      channel,
      release() {
        channel.detach();
        session.legs.unmark(leg, "scatter");
        session.legs.release(leg);
      },
    };
  });
}
