import type { SessionPort } from "../engine/session-port.js";
import { commitAcrossRegions, rollbackAll } from "./commit-across-regions.js";

/**
 * An extended-protocol batch outside a transaction block is about to write a second region. Each
 * connection the batch used so far gets BEGIN, which turns the implicit transaction it is in (its
 * statements since the last Sync) into a block the proxy ends itself; later connections open with
 * BEGIN. At the client's Sync the whole batch commits in two phases (`finishDistributedBatch`).
 */
export async function beginDistributedBatch(session: SessionPort): Promise<void> {
  if (session.txn !== null) return;
  const txn = session.block.begin("BEGIN", true, session.settings.snapshot());
  txn.endsAtSync = true;
  const written = session.extended.batchWriteRegion;
  for (const leg of session.batchLegs.values()) {
    if (leg.broken !== null) continue;
    txn.legs.add(leg);
    await session.runOnLeg(leg, "BEGIN", "silent", true);
  }
  if (written !== null && txn.legs.has(written)) {
    txn.writeRegion = written;
    txn.writeRegions.add(written);
  }
}

/**
 * The client's Sync ended a batch that wrote in several regions: every connection has answered its
 * Sync (they stay inside BEGIN); commit in two phases, or roll back when the batch failed. An error
 * goes to the client before the ReadyForQuery, as PostgreSQL reports a failed commit at Sync.
 */
export async function finishDistributedBatch(session: SessionPort): Promise<void> {
  const txn = session.txn;
  if (txn === null || !txn.endsAtSync) return;
  await session.settle();
  const legs = [...txn.legs.values()];
  let committed = false;
  if (txn.status === "E" || txn.failed) {
    await rollbackAll(legs);
    session.runtime.observability.transactionEnded("aborted");
  } else {
    const error = await commitAcrossRegions(session, txn);
    if (error !== null) session.relay.error(error, false);
    else committed = true;
  }
  session.block.end();
  if (!committed) session.settings.restore(txn.settingsBefore);
  txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
  // Connections opened after BEGIN are not the batch's: give them back here (the batch's go at its ReadyForQuery).
  for (const leg of legs) if (!session.legs.has(leg, "batch")) session.releaseLeg(leg);
}
