import { BackendCode, decodeErrorResponse, encodeQuery, isProtocolFault, PgError } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import { internalError } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";

/**
 * Makes the connection's settings the client's, before BEGIN so a rollback keeps them.
 * Resolves with null once they are (at once when nothing differs), or with the error the
 * server gave: the client's statement must then not run there, since it would run with other
 * settings than the client's (another role, say).
 */
export function replaySettings(session: SessionPort, leg: Leg): Promise<PgError | null> | null {
  const applied = leg.connection.appliedSettings;
  const replay = session.settings.replayFor(applied);
  if (replay === null) return null;
  session.settings.markApplied(applied);
  return new Promise((resolve) => {
    let failure: PgError | null = null;
    session.relay.expect({
      leg,
      kind: "query",
      mode: "silent",
      dropReadyForQuery: true,
      inspect: (frame) => {
        if (frame.code !== BackendCode.ErrorResponse || failure !== null) return;
        const decoded = decodeErrorResponse(frame.payload);
        failure = isProtocolFault(decoded)
          ? internalError(decoded.message)
          : PgError.fromFields(decoded.fields);
      },
      done: (unit) => {
        if (unit.failed) applied.clear();
        resolve(
          unit.failed
            ? (failure ?? leg.connection.brokenError ?? internalError("a setting could not be replayed"))
            : null,
        );
      },
      // A connection the unreachable guard broke reports why (08006 naming the region).
      skipped: () => resolve(leg.connection.brokenError ?? internalError("a setting could not be replayed")),
    });
    leg.write(encodeQuery({ sql: replay }));
    // Flushed by the Query's own ReadyForQuery; the statement waits for it.
  });
}
