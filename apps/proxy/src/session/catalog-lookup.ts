import { BackendCode, encodeQuery } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Route } from "../routing/router.js";
import { allValues } from "../scatter/data-row.js";
import { stateRegion } from "./state-region.js";

/** Where the catalog is asked: the region holding the session's state (its temporary tables too). */
export function lookupRoute(session: SessionPort): Route {
  return { kind: "region", region: stateRegion(session), readOnly: true, anywhere: false };
}

/**
 * Runs one catalog query for `analysis` on the session's own connection where its state lives,
 * so the name resolves as it will for the statement itself: under the session's search_path,
 * seeing its temporary tables, and inside a block the block's own schema changes. Each answer
 * row's values go to `onRow`. Resolves "failed" when PostgreSQL refused (a missing table is
 * 42P01): its error is already sent, and ReadyForQuery too when the statement was the last.
 * `keepBlockGoing` drops the lookup's ReadyForQuery: the statement's own messages follow on the
 * same connection.
 */
export async function lookUpInCatalog(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  sql: string,
  onRow: (values: readonly (Buffer | null)[]) => void,
  keepBlockGoing = false,
): Promise<"done" | "failed"> {
  let failed = false;
  // A catalog read: whatever the statement does, the lookup only reads.
  await session.runRouted({ ...analysis, readOnly: true }, lookupRoute(session), mode, (leg) => {
    session.relay.expect({
      leg,
      kind: "query",
      mode: "quiet",
      ...(keepBlockGoing ? { dropReadyForQuery: true } : {}),
      inspect: (frame) => {
        if (frame.code === BackendCode.DataRow) onRow(allValues(frame.payload));
      },
      done: (unit, status) => {
        failed = unit.failed;
        session.afterReady(leg, status);
      },
    });
    leg.write(encodeQuery({ sql }));
  });
  await session.relay.idle();
  if (!failed) return "done";
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  return "failed";
}
