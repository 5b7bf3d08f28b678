import { type Frame, PgError } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { refuseFunctionCall } from "../errors/catalog.js";
import { stateRegion } from "./state-region.js";

const FINAL: StatementMode = { extended: false, final: true };

/**
 * A fastpath FunctionCall (libpq's PQfn: psql's \lo_import, large-object APIs). It names its
 * function by OID and works on state of one server session (large-object descriptors live in
 * the transaction), so it is relayed only where every statement of the session meets it on one
 * server: a deployment of one region, or a session with its own connection (session pooling).
 * It runs where the session's other statements would: the block's connection, the pinned one,
 * or the home region's, and counts as a write of that region in a block.
 */
export async function runFunctionCall(session: SessionPort, frame: Frame): Promise<void> {
  if (session.runtime.router.topology.regions.length > 1 && !session.ownConnection) {
    await session.relay.idle();
    session.relay.error(refuseFunctionCall(), false);
    session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  const region = stateRegion(session);
  if (session.relay.pending > 0) await session.settle();
  const leg = await session.legFor(region, false, FINAL);
  if (leg instanceof PgError) {
    session.fail(leg, FINAL);
    return;
  }
  const block = session.txn;
  if (block !== null) {
    // The function may write (lo_write): the block's commit must include this region.
    block.writeRegion ??= leg.region;
    block.writeRegions.add(leg.region);
  }
  const used = leg;
  // Answered like a Query: FunctionCallResponse (or an error), then ReadyForQuery.
  session.relay.expect({
    leg: used,
    kind: "query",
    mode: "relay",
    done: (_unit, status) => session.afterReady(used, status),
  });
  used.write(Buffer.from(frame.bytes));
  await session.relay.idle();
}
