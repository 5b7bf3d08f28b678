import { Messages } from "@geo/proto";
import { finishDistributedBatch } from "../../distributed/distributed-batch.js";
import type { SessionPort } from "../../engine/session-port.js";
import type { ExtendedState } from "./extended-state.js";

/**
 * Sync: every connection the batch used gets its own Sync (ending its implicit transaction, or
 * not, inside a block); the client gets one ReadyForQuery with the session's status.
 */
export async function syncMessage(session: SessionPort, state: ExtendedState): Promise<void> {
  const copyFrom = state.copyFrom;
  if (copyFrom !== null) {
    // Sent before the COPY's CopyDone or CopyFail: if the backend is in copy-in mode it ignores
    // this Sync, and so does the proxy (the client's next Sync, after its CopyDone, is answered).
    const beforeCopyEnd = session.client.copyEnds === copyFrom.copyEndsAtExecute;
    if (beforeCopyEnd && (await copyFrom.entered)) return;
    state.copyFrom = null;
  }
  if (state.aborting !== null) {
    await state.aborting;
    state.aborting = null;
  }
  const errorsBefore = state.errorsAtBatchStart;
  state.skipping = false;
  state.inBatch = false;
  state.batchWriteRegion = null;
  state.unnamed = null;
  if (session.txn === null) state.portals.clear();
  // The leg in use first (its Sync pipelines behind its answers), then the others one at a time.
  const active = session.currentLeg;
  const legs = [...state.touched].sort((a, b) => (a === active ? -1 : b === active ? 1 : 0));
  state.touched.clear();
  state.syncsPending++;
  for (const leg of legs) {
    if (leg.broken !== null) continue;
    // The leg in use needs no activation: no promise for the common one-leg batch.
    if (leg !== session.currentLeg) await session.activate(leg);
    // Relayed but for its ReadyForQuery (the client gets one, the proxy's): a server reports
    // changed settings (ParameterStatus) just before it, and an implicit block's COMMIT fails
    // there (a deferred constraint), which the client must hear.
    session.relay.expect({
      leg,
      kind: "sync",
      mode: "relay",
      dropReadyForQuery: true,
      done: (_unit, status) => {
        if (session.txn === null && (status === "T" || status === "E"))
          session.block.begin("BEGIN", false, session.settings.snapshot()).legs.add(leg);
      },
    });
    leg.write(Messages.sync);
  }
  state.touched.clear();
  if (session.txn?.endsAtSync === true) await finishDistributedBatch(session);
  session.relay.local({
    bytes: () => session.readyForQuery(),
    syncAnswer: true,
    effect: () => {
      state.syncsPending--;
      // The batch is over: its connections go back unless the block (or a pin) keeps them.
      const legs = session.legs;
      for (const leg of [...legs.batch.clear(), ...legs.replicaBatch.clear()]) legs.release(leg);
      session.settleBatchPins(session.relay.errorsSent > errorsBefore);
    },
  });
  session.runtime.moves?.afterSync(session, session.relay.idle());
}
