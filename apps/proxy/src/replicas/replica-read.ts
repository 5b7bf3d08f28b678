import { endpointAddress, type Lease, regionPrimaryDown, type WriteFence } from "@geo/pool";
import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { Leg } from "../executor/leg.js";
import type { Route } from "../routing/router.js";

/** Statement kinds a hot standby runs exactly as its primary would. */
const REPLICA_KINDS: ReadonlySet<Analysis["kind"]> = new Set(["select", "explain"]);

/**
 * Whether `analysis`, routed to `region`, may run on one of the region's replicas: it reads only
 * (the analysis found no write, writing CTE, row lock, SELECT INTO, writing or advisory-lock
 * function, and no `/* geo: primary *\/` hint), it changes nothing in the session, it is not part of
 * a string of several statements, and it runs outside a transaction block or in one opened READ
 * ONLY. Whether a replica actually qualifies (healthy, within the lag, past the session's writes)
 * is decided when the connection is taken.
 */
export function mayReadOnReplica(
  session: SessionPort,
  analysis: Analysis,
  route: Route,
  region: string,
): boolean {
  const service = session.runtime.replicas;
  if (service === undefined || route.kind !== "region" || !route.readOnly || route.onPrimary === true)
    return false;
  if (!analysis.readOnly || analysis.needsPrimary !== undefined || analysis.hints.primary) return false;
  if (!REPLICA_KINDS.has(analysis.kind) || analysis.sessionEffects.length > 0) return false;
  if (!service.pools.regionHasReplicas(region)) return false;
  const txn = session.txn;
  if (txn === null) return true;
  if (txn.legs.has(region)) return false;
  const begin = session.runtime.router.analyze(txn.beginSql);
  return !(begin instanceof PgError) && begin.transaction?.readOnly === true;
}

/** Notes a write sent to `region` (on `leg`, or already ended when null), for read-your-writes. */
export function noteWrite(session: SessionPort, region: string, leg: Leg | null): void {
  const service = session.runtime.replicas;
  if (service === undefined || !service.pools.regionHasReplicas(region)) return;
  session.replicas.noteWrite(region, leg);
}

/**
 * True once the write carried by `leg` has ended: its transaction block is over, its batch synced,
 * and its answers are in (a broken connection has ended too, one way or the other).
 */
function writeEnded(session: SessionPort, leg: Leg | null): boolean {
  if (leg === null || leg.broken !== null) return true;
  if (session.legs.has(leg, "block") || session.legs.has(leg, "batch")) return false;
  const extended = session.extended;
  if (extended.inBatch && extended.batchWriteRegion === leg.region) return false;
  return leg.outstanding === 0;
}

/**
 * The session's fence in `region`, taking it now when its last write there has ended; "primary"
 * while that write is still open (the read goes to the primary, which holds it).
 */
function fenceFor(session: SessionPort, region: string): WriteFence | "primary" | undefined {
  const state = session.replicas;
  const pending = state.pendingWrite(region);
  if (pending !== undefined) {
    if (!writeEnded(session, pending)) return "primary";
    state.fence(region, session.runtime.replicas!.health.writeFence(region));
  }
  return state.fenceOf(region);
}

function isConnectionFailure(error: unknown): boolean {
  return error instanceof PgError && error.code.startsWith("08");
}

/**
 * A connection for a read that may run on a replica (with the replica's `host:port`): a qualifying replica's (they take turns), or
 * the primary's when none qualifies or none can be reached (nothing was sent yet, so the read loses
 * nothing by moving). A replica that refuses the connection is marked down at once. When the
 * primary cannot be reached either, the read fails with 08001 saying so: replicas answer only while
 * their primary does, since only then is their lag known.
 */
export async function acquireRead(
  session: SessionPort,
  region: string,
): Promise<{ lease: Lease; replica?: string }> {
  const service = session.runtime.replicas!;
  const fence = fenceFor(session, region);
  if (fence !== "primary") {
    for (;;) {
      const chosen = service.health.pickReplica(region, { maxLagBytes: service.maxLagBytes, fence });
      if (chosen === undefined) break;
      try {
        const lease = await service.pools.acquire(chosen.address, session.user, session.database);
        return { lease, replica: chosen.address };
      } catch (error) {
        if (!isConnectionFailure(error)) break;
        session.log.warn({ region, replica: chosen.address, err: String(error) }, "replica unreachable");
        service.health.reportFailure(chosen.address, error);
      }
    }
  }
  try {
    return { lease: await session.runtime.pools.acquireForSession(region, session.user, session.database) };
  } catch (error) {
    if (!isConnectionFailure(error)) throw error;
    const primary = session.runtime.router.topology.region(region)!.primary;
    const address = endpointAddress(primary);
    service.health.reportFailure(address, error);
    throw regionPrimaryDown(region, address, (error as PgError).message);
  }
}
