import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import { backendLost, pinnedConnectionLost } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";

// The ends of a session's connections: a CancelRequest, the client leaving, a backend lost.

/** A CancelRequest with this session's key: cancel what its connections run now, then retire them. */
export function cancelSession(session: SessionPort): void {
  const gid = session.block.committingGid;
  if (gid !== null) {
    if (session.runtime.txn.isDecided(gid)) {
      // All a cancel could still do is interrupt COMMIT PREPARED: the commit is decided.
      session.log.info({ gid }, "cancel ignored: the distributed commit is decided");
      return;
    }
    // Before the decision a cancel may stop a slow PREPARE; the coordinator then rolls back everywhere.
    for (const leg of session.txn?.legs.values() ?? []) {
      leg.retire = true;
      leg.connection.cancel().catch((error: unknown) => session.log.warn({ err: error }, "cancel failed"));
    }
    return;
  }
  for (const hook of session.cancelHooks) hook();
  session.fastLane.cancel();
  for (const leg of session.legs.all()) {
    if (!leg.busy) continue;
    leg.retire = true;
    session.log.info({ region: leg.region }, "cancelling the backend statement");
    leg.connection.cancel().catch((error: unknown) => session.log.warn({ err: error }, "cancel failed"));
  }
}

/** The client left (or was closed): every connection the session held is stopped, closed or given back. */
export function releaseSessionLegs(session: SessionPort): void {
  if (session.cancelKey !== null) session.runtime.cancels.unregister(session.cancelKey.processId);
  // A read across regions still running has nobody to answer: its regions' statements stop
  // now (their connections are cancelled, so never pooled again) instead of running to the end.
  for (const hook of session.cancelHooks) hook();
  session.fastLane.abandon();
  session.block.end();
  const own = session.ownConnection && !session.runtime.config.pool.sessionReuse ? session.legs.pinned : null;
  for (const leg of session.legs.drain()) {
    if (leg.broken === null && !leg.connection.isQuiescent) {
      // The client left mid-statement: stop the statement on the server (it would hold its
      // locks until it ends), and close the connection rather than reuse it.
      leg.retire = true;
      leg.connection.cancel().catch((error: unknown) => session.log.debug({ err: error }, "cancel failed"));
    }
    if (leg === own) {
      // Session pooling: the client's server session ends with its own, as with one server
      // (a later client must not find plpgsql loaded, a temporary namespace, or its statistics).
      leg.close("the client's session ended");
      continue;
    }
    // An open transaction or pinned objects need a full reset.
    session.legs.discard(leg, true);
  }
}

/** A backend connection broke: the session, its block or the statement in flight hear it as PostgreSQL's client would. */
export function onLegLost(session: SessionPort, leg: Leg, error: PgError): void {
  session.log.warn({ region: leg.region, err: error.message }, "backend connection lost");
  const roles = session.legs.lost(leg);
  const wasPinned = roles.has("pinned");
  if (wasPinned && session.ownConnection) {
    // The client's own server session ended: so does the client's, as PostgreSQL ends it. A
    // server that said why (FATAL, as pg_terminate_backend makes it) is heard as it spoke: its
    // error went to the client with the statement it ended, or, while idle, is sent now; then
    // the socket closes with nothing more, as a server's does.
    const serverFatal = error.cause instanceof PgError && error.cause.isFatal ? error.cause : null;
    const relayed = serverFatal !== null && leg.outstanding > 0;
    session.legs.discard(leg, true);
    if (relayed) session.close();
    else session.fatal(serverFatal ?? pinnedConnectionLost(leg.region));
    return;
  }
  if (leg.fatalRelayed) {
    // The server's FATAL went to the client as its statement's answer (pg_terminate_backend of
    // the backend running it, a server shutting down): a client told FATAL expects its
    // connection to end, as PostgreSQL ends it, and a second error for the same statement would
    // break the protocol. So the client's session ends here too, in transaction pooling as well.
    session.legs.discard(leg, true);
    session.close();
    return;
  }
  if (wasPinned) {
    session.pins.record({
      sessionEffects: [{ kind: "discard", local: false, value: "all" }],
    } as unknown as Analysis);
  }
  if (roles.has("block")) session.block.fail();
  session.client.lost(leg);
  session.relay.failLeg(leg, wasPinned ? pinnedConnectionLost(leg.region) : backendLost(leg.region, error));
  session.legs.discard(leg, true);
}
