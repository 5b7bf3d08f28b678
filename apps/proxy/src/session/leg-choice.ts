import type { Lease } from "@geo/pool";
import { encodeQuery, PgError } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { clientGone, internalError } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import { acquireRead } from "../replicas/replica-read.js";

/**
 * The connection a statement for `region` runs on: the transaction's leg there (opened now if
 * new, with the client's settings and BEGIN replayed), the pinned connection, the batch's leg, or
 * a fresh one from the pool with the client's settings replayed. `anywhere`: the statement reads
 * no table, so any connection already held will do. `readsReplica`: it may run on a replica of
 * the region (`replicas/replica-read.ts`).
 */
export async function chooseLeg(
  session: SessionPort,
  region: string,
  anywhere: boolean,
  mode: StatementMode,
  readsReplica = false,
): Promise<Leg | PgError> {
  let txn = session.txn;
  if (txn?.ending === true && !txn.legs.has(region)) {
    // The block's COMMIT or ROLLBACK is on its way (pipeline): another region must not be
    // opened inside a block that is over. Its answer comes first (nothing is skipped here:
    // after an error this batch's messages would not reach this far).
    await session.settle();
    txn = session.txn;
  }
  if (anywhere) {
    // Inside a block only the block's own legs will do: a pinned or batch connection outside
    // it would run the statement in autocommit, and its failure would not fail the block.
    if (txn !== null) {
      const primary = txn.primaryLeg();
      if (primary !== undefined) return session.activate(primary);
      if (session.pinnedLeg !== null) region = session.pinnedLeg.region;
    } else {
      const held = session.pinnedLeg ?? session.batchLegs.values()[0];
      if (held !== undefined) return session.activate(held);
    }
  }
  if (txn !== null) {
    const existing = txn.legs.get(region);
    if (existing !== undefined) return session.activate(existing);
  } else {
    if (session.pinnedLeg !== null && session.pinnedLeg.region === region)
      return session.activate(session.pinnedLeg);
    const batchLeg = session.batchLegs.get(region);
    if (batchLeg !== undefined) return session.activate(batchLeg);
    const replicaLeg = readsReplica ? session.legs.replicaBatch.get(region) : undefined;
    if (replicaLeg !== undefined) return session.activate(replicaLeg);
  }
  if (session.relay.pending > 0) await session.quiesceActive();
  let leg: Leg;
  if (session.pinnedLeg !== null && session.pinnedLeg.region === region) leg = session.pinnedLeg;
  else {
    let lease: Lease;
    let replica: string | undefined;
    try {
      if (readsReplica) ({ lease, replica } = await acquireRead(session, region));
      else
        lease =
          session.runtime.pools.tryAcquire(region, session.user, session.database) ??
          (await session.runtime.pools.acquireForSession(region, session.user, session.database));
    } catch (error) {
      return error instanceof PgError ? error : internalError(error);
    }
    if (session.phase === "closed") {
      // The client left while waiting for the connection: nobody would ever give it back.
      lease.release();
      return clientGone();
    }
    leg = session.legs.open(region, lease, replica);
    const replayed = session.replaySettings(leg);
    if (replayed !== null) {
      const failed = await replayed;
      if (failed !== null || leg.broken !== null) {
        // The connection holds part of the settings, or none: closed, never reused.
        leg.retire = true;
        session.legs.discard(leg, true);
        return failed ?? leg.broken ?? internalError("the connection broke while settings were replayed");
      }
    }
  }
  if (txn !== null) {
    txn.legs.add(leg);
    session.relay.expect({ leg, kind: "query", mode: "quiet", dropReadyForQuery: true });
    leg.write(encodeQuery({ sql: txn.openingSql() }));
  } else if (mode.extended) session.holdForBatch(leg);
  session.legs.active = leg;
  if (mode.extended) session.extended.touch(leg);
  return leg;
}
