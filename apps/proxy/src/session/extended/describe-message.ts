import {
  BackendCode,
  decodeDescribe,
  decodeParameterDescription,
  encodeDescribe,
  encodeParameterDescription,
  type Frame,
  isProtocolFault,
  Messages,
  protocolViolation,
} from "@geo/proto";
import type { SessionPort } from "../../engine/session-port.js";
import type { StatementMode } from "../../engine/statement-mode.js";
import { unknownStatement } from "../../errors/catalog.js";
import type { Route } from "../../routing/router.js";
import { consoleDescription } from "../console-statement.js";
import { shapeOf } from "../result-shape.js";
import type { BackendCopy, ClientStatement } from "./client-statement.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";
import type { Portal } from "./portal.js";
import { toCursor } from "./sql-cursor.js";
import { prepareOn } from "./statement-cache.js";

export async function describeMessage(
  session: SessionPort,
  state: ExtendedState,
  frame: Frame,
): Promise<void> {
  const message = decodeDescribe(frame.payload);
  if (isProtocolFault(message)) {
    session.fatal(protocolViolation(message));
    return;
  }
  if (message.target === "P") {
    const portal = state.portals.get(message.name);
    if (portal === undefined) {
      await toCursor(session, message.name, frame, "describe-portal");
      return;
    }
    if (portal.scatter !== undefined) {
      await portal.scatter.describe(session);
      return;
    }
    if (portal.distributed !== undefined) {
      await portal.distributed.describe(session);
      return;
    }
    if (portal.leg === null) {
      session.relay.local({ bytes: localDescription(session, portal.statement, portal.local, false) });
      return;
    }
    const leg = await session.activate(portal.leg);
    const statement = portal.statement;
    session.relay.expect({
      leg,
      kind: "describe-portal",
      mode: "relay",
      // The first columns the client is told are the statement's, as one server fixes them.
      inspect: (reply) => {
        const shape = shapeOf(reply);
        if (shape === null) return;
        statement.resultShape ??= shape;
        if (shape !== statement.resultShape || statement.name === "") return;
        const copy = leg.connection.preparedStatements.get(statement.backendName) as BackendCopy | undefined;
        if (copy !== undefined) copy.shape = shape;
      },
    });
    leg.write(frame.bytes);
    return;
  }
  const statement = state.statements.get(message.name);
  if (statement === undefined) {
    session.fail(unknownStatement(message.name), EXTENDED);
    return;
  }
  const route = session.runtime.router.route(statement.analysis, undefined, session.searchPath());
  // SQL EXECUTE answers with its prepared statement's columns: the server holding it describes it.
  const executes = statement.analysis.sessionEffects.some((effect) => effect.kind === "execute");
  if (route.kind === "local" && !executes) {
    session.relay.local({ bytes: localDescription(session, statement, route.what, true) });
    return;
  }
  const region =
    executes && session.pinnedLeg !== null
      ? session.pinnedLeg.region
      : session.runtime.router.describeRegion(statement.analysis);
  await describeOnServer(session, state, statement, region, true);
}

/**
 * Describes `statement` on a connection of `region`, prepared there first if need be: for the
 * client (its answer relayed, the columns it will decode by recorded) or for the proxy alone
 * (only the parameter types kept; flushed, so the answer comes now). Outside a transaction, a
 * connection taken only to describe is synced and given back at once (pipelined, no extra
 * round trip): the Bind that follows may well go elsewhere.
 */
export async function describeOnServer(
  session: SessionPort,
  state: ExtendedState,
  statement: ClientStatement,
  region: string,
  forClient: boolean,
): Promise<void> {
  const borrowed =
    session.txn === null && !session.batchLegs.has(region) && session.pinnedLeg?.region !== region;
  const mode: StatementMode = borrowed ? { extended: false, final: false } : EXTENDED;
  const describeRoute: Route = { kind: "region", region, readOnly: true, anywhere: false };
  await session.runRouted(statement.analysis, describeRoute, mode, (leg) => {
    const name = prepareOn(session, state, leg, statement);
    session.relay.expect({
      leg,
      kind: "describe-statement",
      mode: forClient ? "relay" : "silent",
      inspect: (reply) => {
        const shape = forClient ? shapeOf(reply) : null;
        if (shape !== null) {
          // What the client now decodes rows by, and what this copy answers with.
          statement.resultShape = shape;
          const copy = leg.connection.preparedStatements.get(name) as BackendCopy | undefined;
          if (copy !== undefined) copy.shape = shape;
          return;
        }
        if (reply.code !== BackendCode.ParameterDescription) return;
        const description = decodeParameterDescription(reply.payload);
        if (!isProtocolFault(description)) statement.describedTypes = description.typeOids;
      },
    });
    if (!borrowed) {
      // The client's own Flush or Sync follows its Describe; the proxy's needs one now.
      leg.write(
        forClient
          ? encodeDescribe({ target: "S", name })
          : [encodeDescribe({ target: "S", name }), Messages.flush],
      );
      // A Describe leaves the unnamed statement as it was.
      if (state.unnamed?.leg === leg && state.unnamed.statement === statement)
        state.unnamed.writeCount = leg.writeCount;
      return;
    }
    session.relay.expect({ leg, kind: "sync", mode: "silent", done: () => session.releaseLeg(leg) });
    leg.write([encodeDescribe({ target: "S", name }), Messages.sync]);
  });
}

/** ParameterDescription (for a statement) and the row shape of a statement the proxy answers. */
function localDescription(
  session: SessionPort,
  statement: ClientStatement,
  local: Portal["local"],
  withParameters: boolean,
): Buffer {
  const parts: Buffer[] = [];
  if (withParameters) {
    parts.push(encodeParameterDescription({ typeOids: [...statement.paramTypes] }));
  }
  if (local === "console") {
    parts.push(consoleDescription(session, statement.analysis) ?? Messages.noData);
  } else parts.push(Messages.noData);
  return Buffer.concat(parts);
}
