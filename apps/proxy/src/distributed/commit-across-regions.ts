import type { PgError } from "@geo/proto";
import type { Participant } from "@geo/txn";
import type { SessionPort } from "../engine/session-port.js";
import type { Leg } from "../executor/leg.js";
import type { Transaction } from "../session/transaction.js";
import {
  decisionLogUnavailable,
  readLegCommitFailed,
  refuseTwoPhaseOutsideEndpointDatabase,
  txnErrorToPg,
} from "./txn-errors.js";
import { abandonConnection, runOn } from "./txn-service.js";

/**
 * A leg inside an open transaction as a two-phase commit participant. A step the coordinator
 * stopped waiting on breaks the leg's connection, so it is discarded, never pooled.
 */
export function participantOf(leg: Leg): Participant {
  return {
    region: leg.region,
    query: (sql) => runOn(leg.connection, sql),
    abandon: (reason) => abandonConnection(leg.connection, reason),
  };
}

/**
 * Ends a transaction block that wrote in several regions: the regions only read are committed
 * one-phase (nothing to make atomic), the written ones through the coordinator in two phases.
 * Resolves with null when committed (including "in doubt": decided, recovery finishes it), else
 * with the error for the client, everything rolled back. The session's answers must be drained.
 */
export async function commitAcrossRegions(session: SessionPort, txn: Transaction): Promise<PgError | null> {
  const written: Leg[] = [];
  const read: Leg[] = [];
  for (const leg of txn.legs.values()) (txn.writeRegions.has(leg.region) ? written : read).push(leg);
  const observability = session.runtime.observability;
  // The proxy's own COMMIT and ROLLBACK of a leg are bounded like the coordinator's steps: a frozen
  // region must not hold the client's COMMIT for ever.
  const stepTimeoutMs = session.runtime.config.txn.stepTimeoutMs;
  for (const leg of written) {
    const endpoint = session.runtime.router.topology.region(leg.region)!.primary;
    if (leg.connection.database !== endpoint.database) {
      await rollbackAll([...written, ...read], stepTimeoutMs);
      observability.transactionEnded("aborted");
      return refuseTwoPhaseOutsideEndpointDatabase(leg.connection.database, endpoint.database);
    }
  }
  let coordinator: Awaited<ReturnType<typeof session.runtime.txn.coordinator>>;
  try {
    coordinator = await session.runtime.txn.coordinator();
  } catch (error) {
    await rollbackAll([...written, ...read], stepTimeoutMs);
    observability.transactionEnded("aborted");
    return decisionLogUnavailable(error);
  }
  // The regions only read commit first; one that fails (a serialization failure, say) fails the
  // whole block, before anything written is prepared.
  const readFailures = await Promise.all(
    read.map((leg) =>
      runOn(leg.connection, "COMMIT", stepTimeoutMs).then(
        // A block the server had already failed answers COMMIT with ROLLBACK.
        (result) =>
          result.command === "ROLLBACK" ? readLegCommitFailed(leg.region, new Error("it had failed")) : null,
        (error: unknown) => readLegCommitFailed(leg.region, error),
      ),
    ),
  );
  const readFailure = readFailures.find((failure) => failure !== null);
  if (readFailure != null) {
    await rollbackAll(written, stepTimeoutMs);
    observability.transactionEnded("aborted");
    return readFailure;
  }
  const gid = coordinator.newGid();
  session.block.committing(gid);
  try {
    const result = await coordinator.commit(written.map(participantOf), { gid });
    observability.transactionEnded(result.outcome === "committed" ? "two_phase_committed" : "in_doubt");
    if (result.outcome === "in-doubt") {
      session.log.warn({ gid, unresolved: result.unresolved }, "committed; recovery finishes the commit");
    }
    return null;
  } catch (error) {
    observability.transactionEnded("aborted");
    return txnErrorToPg(error);
  } finally {
    session.block.committing(null);
  }
}

/**
 * ROLLBACK on every leg that still works; a failed one is discarded when released. With
 * `timeoutMs`, a leg that does not answer in time has its connection destroyed (and so discarded).
 */
export async function rollbackAll(legs: readonly Leg[], timeoutMs?: number): Promise<void> {
  await Promise.all(
    legs.map((leg) =>
      leg.broken === null ? runOn(leg.connection, "ROLLBACK", timeoutMs).catch(() => undefined) : undefined,
    ),
  );
}
