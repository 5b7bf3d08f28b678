import type { Lease } from "@geo/pool";
import { encodeQuery, PgError, SqlState } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { internalError } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import { regionLost } from "./errors.js";
import { RegionChannel } from "./region-channel.js";

/** The failure was already sent to the client (by the session, opening a region's transaction). */
export class AlreadyReported extends Error {
  constructor() {
    super("already reported to the client");
  }
}

/** A region's connection for one scatter, and how it goes back once the scatter is over. */
export interface RegionConnection {
  readonly region: string;
  readonly channel: RegionChannel;
  /** Returns the connection: to the pool, or to the session's transaction. */
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
 * Outside a transaction each region gets a connection of its own from the pool (all at once), made
 * to hold the client's session settings first. Inside one, the transaction's connection in that
 * region is used (opened with the transaction's BEGIN if the block had not reached it yet), so
 * the scatter reads what the block wrote and its snapshot.
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
        leases.set(region, await session.runtime.pools.acquire(region, session.user, session.database));
      } catch (error) {
        throw connectFailure(region, error);
      }
    }
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
  const connection = lease.connection;
  const channel = new RegionChannel(region, connection);
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
      if (channel.broken || connection.broken) lease.discard("broken");
      else if (channel.cancelled || channel.syncsPending > 0 || channel.open) lease.discard("cancelled");
      else if (replayFailed) lease.release({ reset: true });
      else lease.release();
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
    const channel = new RegionChannel(leg.region, leg.connection);
    return {
      region: leg.region,
      channel,
      release() {
        if (channel.cancelled) leg.retire = true;
        leg.connection.setReceiver({ onFrame: (frame) => session.relay.onFrame(leg, frame) });
        if (leg.connection.isPaused) leg.connection.resume();
      },
    };
  });
}
