import { decodeParse, type Frame, isProtocolFault, Messages, PgError, protocolViolation } from "@geo/proto";
import type { SessionPort } from "../../engine/session-port.js";
import { duplicateStatement } from "../../errors/catalog.js";
import type { Route } from "../../routing/router.js";
import { refuseDatabaseFunctionCall } from "../database-function-calls.js";
import { backendNameOf, type ClientStatement } from "./client-statement.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";
import { prepareOn } from "./statement-cache.js";

export async function parseMessage(session: SessionPort, state: ExtendedState, frame: Frame): Promise<void> {
  const message = decodeParse(frame.payload);
  if (isProtocolFault(message)) {
    session.fatal(protocolViolation(message));
    return;
  }
  if (message.name !== "" && state.statements.has(message.name)) {
    session.fail(duplicateStatement(message.name), EXTENDED);
    return;
  }
  const analysis = session.runtime.router.analyze(message.sql);
  if (analysis instanceof PgError) {
    session.fail(analysis, EXTENDED);
    return;
  }
  // PostgreSQL refuses every Parse but ROLLBACK and COMMIT in a failed block (25P02).
  if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
  const backendName = message.name === "" ? "" : backendNameOf(message.sql, message.paramTypes);
  const statement: ClientStatement = {
    name: message.name,
    text: message.sql,
    paramTypes: message.paramTypes,
    analysis,
    parsedAt: session.runtime.nextSequence(),
    backendName,
    backendNameBytes: Buffer.from(`${backendName}\0`, "utf8"),
    describedTypes: null,
    resultShape: null,
    checked: null,
  };
  const previous = state.statements.get(message.name);
  state.statements.set(message.name, statement);
  const undo = (): void => {
    if (state.statements.get(message.name) !== statement) return;
    if (previous === undefined) state.statements.delete(message.name);
    else state.statements.set(message.name, previous);
  };
  if (await refuseDatabaseFunctionCall(session, analysis, EXTENDED)) return;
  const route = session.runtime.router.route(analysis, undefined, session.searchPath());
  // A named SET, RESET, DISCARD... the proxy runs itself. With a connection of its own
  // (session pooling) the client's server lists every statement it prepared in
  // pg_prepared_statements, those too: they are prepared there as well (never executed there).
  const ownCopy =
    route.kind === "local" && route.what === "session" && message.name !== "" && session.ownConnection
      ? session.pinnedLeg
      : null;
  if (
    // Only a statement whose region is known now is checked now: one routed by its parameters
    // (or read across regions) would hold a connection here that its Bind may not use, so its
    // server error arrives at Bind, from the region that runs it.
    (route.kind !== "region" && ownCopy === null) ||
    // A server's Parse of a write takes the table's RowExclusiveLock until Sync, and the Bind
    // after it may wait for a move of its key, which waits for that lock: with moves, writes
    // are checked by the server at Bind instead.
    (session.runtime.moves !== undefined && !analysis.readOnly)
  ) {
    // The proxy answers these itself (or refuses them at Bind): no server has to check them.
    session.relay.local({ bytes: Messages.parseComplete, skipped: undo });
    return;
  }
  // The server checks the statement now, so its error (or ParseComplete) arrives where
  // PostgreSQL sends it; the Bind that follows on the same connection reuses this copy.
  const region = ownCopy?.region ?? session.runtime.router.describeRegion(analysis);
  const checkRoute: Route = { kind: "region", region, readOnly: true, anywhere: false };
  let settle: (parsed: boolean) => void = () => undefined;
  statement.checked = new Promise((resolve) => {
    settle = resolve;
  });
  const leg = await session.runRouted(analysis, checkRoute, EXTENDED, (l) => {
    prepareOn(session, state, l, statement, {
      done: (unit) => {
        if (unit.failed) undo();
        statement.checked = null;
        settle(!unit.failed);
      },
      // Skipped after an earlier error of the batch: the Parse never happened, as on one server.
      skipped: () => {
        undo();
        statement.checked = null;
        settle(false);
      },
    });
  });
  if (leg === null) {
    statement.checked = null;
    settle(false);
  }
}
