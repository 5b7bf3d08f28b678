import {
  BackendCode,
  encodeBind,
  encodeClose,
  encodeExecute,
  encodeParse,
  encodeQuery,
  type Frame,
  Messages,
  type PgError,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../../engine/session-port.js";
import type { StatementMode } from "../../engine/statement-mode.js";
import type { Leg } from "../../executor/leg.js";
import { allValues } from "../../scatter/data-row.js";
import { errorOf } from "../../scatter/region-channel.js";
import { lookupRoute } from "../catalog-lookup.js";
import { namesToResolve, qualifiedAnalysis, readSchemaRow, schemasSql } from "../qualified-names.js";
import { stateRegion } from "../state-region.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";

/** The proxy's own statement and portal for the lookup, closed again before anything else is sent. */
const LOOKUP = "geo_name_lookup";

/**
 * A prepared statement's unqualified names resolved as PostgreSQL resolves them for this
 * execution (session/qualified-names.ts explains why): at each Bind, since the session's
 * search_path, or the tables of its schemas, may have changed since the Parse. Outside a
 * transaction block the lookup borrows a connection of its own; inside one, or on a connection
 * the batch or the session already holds, it runs there between the client's messages as a
 * statement and portal of the proxy's own, flushed and closed, so the block (its SET LOCAL, its
 * temporary tables) is what resolves the names and nothing of the client's batch is disturbed.
 *
 * Returns the statement to route; null when there is nothing to resolve; "failed" when the lookup
 * failed, its error sent as the batch's error (the batch then skips to its Sync).
 */
export async function qualifiedAtBind(
  session: SessionPort,
  state: ExtendedState,
  analysis: Analysis,
): Promise<Analysis | "failed" | null> {
  const names = namesToResolve(session, analysis);
  if (names.length === 0) return null;
  const found = new Map<string, string>();
  let error: PgError | null = null;
  const region = stateRegion(session);
  const borrowed =
    session.txn === null && !session.batchLegs.has(region) && session.pinnedLeg?.region !== region;
  const mode: StatementMode = borrowed ? { extended: false, final: false } : EXTENDED;
  const lookup: Analysis = { ...analysis, readOnly: true };
  const sql = schemasSql(names);
  await session.runRouted(lookup, lookupRoute(session), mode, (leg) => {
    const inspect = (frame: Frame): void => {
      if (frame.code === BackendCode.ErrorResponse) error ??= errorOf(frame);
      else if (frame.code === BackendCode.DataRow) readSchemaRow(allValues(frame.payload), names, found);
    };
    if (borrowed) {
      session.relay.expect({
        leg,
        kind: "query",
        mode: "silent",
        inspect,
        done: (_unit, status) => session.afterReady(leg, status),
      });
      leg.write(encodeQuery({ sql }));
      return;
    }
    inBatch(session, state, leg, sql, inspect);
  });
  await session.settle();
  if (error !== null) {
    session.fail(error, EXTENDED);
    return "failed";
  }
  return qualifiedAnalysis(session, analysis, found);
}

/** The lookup as extended messages of the proxy's own on a connection in the middle of a batch. */
function inBatch(
  session: SessionPort,
  state: ExtendedState,
  leg: Leg,
  sql: string,
  inspect: (frame: Frame) => void,
): void {
  const relay = session.relay;
  relay.expect({ leg, kind: "parse", mode: "silent", inspect });
  relay.expect({ leg, kind: "bind", mode: "silent", inspect });
  relay.expect({ leg, kind: "execute", mode: "silent", inspect });
  relay.expect({ leg, kind: "close", mode: "silent", inspect });
  relay.expect({ leg, kind: "close", mode: "silent", inspect });
  const unnamedKept = state.unnamed?.leg === leg && state.unnamed.writeCount === leg.writeCount;
  leg.write([
    encodeParse({ name: LOOKUP, sql, paramTypes: [] }),
    encodeBind({ portal: LOOKUP, statement: LOOKUP, paramFormats: [], params: [], resultFormats: [] }),
    encodeExecute({ portal: LOOKUP, maxRows: 0 }),
    encodeClose({ target: "P", name: LOOKUP }),
    encodeClose({ target: "S", name: LOOKUP }),
    Messages.flush,
  ]);
  // The client's unnamed statement is untouched by a named statement and portal.
  if (unnamedKept && state.unnamed !== null) state.unnamed.writeCount = leg.writeCount;
}
