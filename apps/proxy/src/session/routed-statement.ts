import { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { beginDistributedBatch } from "../distributed/distributed-batch.js";
import { noteWriterWrite, readYourWrites } from "../distributed/read-your-writes.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Leg } from "../executor/leg.js";
import { runMultiRegion } from "../executor/multi-region.js";
import { mayReadOnReplica, noteWrite } from "../replicas/replica-read.js";
import type { Route } from "../routing/router.js";
import { refuseSessionSequences } from "./session-sequences.js";

/**
 * Runs one statement whose route is known. `send` writes the statement to the leg and queues
 * its units (a simple Query, or the extended messages); it returns the unit whose completion
 * ends the statement. Resolves with the leg used, or null when the statement was answered or
 * refused without one.
 */
export async function runRouted(
  session: SessionPort,
  analysis: Analysis,
  route: Route,
  mode: StatementMode,
  send: (leg: Leg) => void,
): Promise<Leg | null> {
  const txn = session.txn;
  if (route.kind === "error") {
    session.fail(route.error, mode);
    return null;
  }
  if (refuseSessionSequences(session, [analysis], mode)) return null;
  if (route.kind === "multi-region") {
    await runMultiRegion(session, analysis, route.plan, mode);
    if (route.plan.kind === "distributed-write")
      for (const written of route.plan.regions)
        noteWrite(session, written, session.txn?.legs.get(written) ?? null);
    return null;
  }
  if (route.kind !== "region" && route.kind !== "deferred") {
    throw new Error(`runRouted called for a ${route.kind} route`);
  }
  const readOnly = route.kind === "region" ? route.readOnly : true;
  // A string of several statements (onPrimary) was placed with every statement's own region.
  const region =
    route.kind === "region"
      ? route.onPrimary === true
        ? route.region
        : readYourWrites(session, analysis, route.region, readOnly)
      : session.runtime.router.topology.home.id;
  const anywhere = route.kind === "region" && route.anywhere;
  const batchWrite = session.extended.batchWriteRegion;
  if (txn === null && mode.extended && batchWrite !== null && batchWrite !== region && !readOnly) {
    // A batch outside a block that writes a second region becomes one distributed transaction.
    await beginDistributedBatch(session);
  }
  const readsReplica = mayReadOnReplica(session, analysis, route, region);
  const leg = await session.legFor(region, anywhere, mode, readsReplica);
  if (leg instanceof PgError) {
    session.fail(leg, mode);
    return null;
  }
  if (!readOnly || !analysis.readOnly) noteWrite(session, leg.region, leg);
  if (!readOnly) {
    const block = session.txn;
    if (block !== null) {
      block.writeRegion ??= leg.region;
      block.writeRegions.add(leg.region);
    } else if (mode.extended) session.extended.batchWriteRegion = leg.region;
    noteWriterWrite(session, analysis, leg.region);
  }
  if (session.log.isLevelEnabled("debug"))
    session.log.debug({ region: leg.region, sql: analysis.text, kind: analysis.kind }, "statement");
  session.runtime.moves?.beforeSend(session, leg, readOnly, mode);
  send(leg);
  return leg;
}

/**
 * One region only: a Query the proxy could not parse goes to the server as it is. If the
 * server runs it, it may have changed anything in the session, so the client keeps that
 * connection from then on (until DISCARD ALL), exactly as it would on one server.
 */
export async function forwardUnread(session: SessionPort, bytes: Buffer): Promise<void> {
  const region = session.runtime.router.topology.home.id;
  if (session.relay.pending > 0) await session.settle();
  const leg = await session.legFor(region, false, { extended: false, final: true });
  if (leg instanceof PgError) {
    session.fail(leg, { extended: false, final: true });
    return;
  }
  session.relay.expect({
    leg,
    kind: "query",
    mode: "relay",
    done: (unit, status) => {
      if (!unit.failed) {
        session.pins.holdUnknown();
        if (session.pinnedLeg === null) {
          session.legs.pin(leg);
          leg.connection.markDirty("full");
          session.log.info(
            { region: leg.region },
            "session pinned to its connection (a statement the proxy could not read)",
          );
        }
      }
      session.afterReady(leg, status);
    },
  });
  leg.write(bytes);
  await session.relay.idle();
}
