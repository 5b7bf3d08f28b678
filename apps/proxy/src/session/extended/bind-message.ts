import type { ParamValue } from "@geo/core";
import {
  BindView,
  decodeBind,
  type Frame,
  FrontendCode,
  isProtocolFault,
  Messages,
  PgError,
  protocolViolation,
} from "@geo/proto";
import { type Analysis, copyStatement } from "@geo/sql";
import { copyToNeedsSimpleQuery } from "../../copy/copy-errors.js";
import { copyBind, DistributedPortal } from "../../distributed/distributed-portal.js";
import type { SessionPort } from "../../engine/session-port.js";
import { unknownStatement, unreadableBinaryKey } from "../../errors/catalog.js";
import type { Leg } from "../../executor/leg.js";
import type { Route } from "../../routing/router.js";
import { resultTypeChanged } from "../../scatter/errors.js";
import { boundParams, ScatterPortal } from "../../scatter/scatter-portal.js";
import { decodeBinaryParam } from "../binary-params.js";
import { refuseDatabaseFunctionCall } from "../database-function-calls.js";
import type { BackendCopy, ClientStatement, ShapeCheck } from "./client-statement.js";
import { describeOnServer } from "./describe-message.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";
import { prereadsAtBind } from "./prereads-at-bind.js";
import { qualifiedAtBind } from "./qualified-at-bind.js";
import { checkShape, prepareOn } from "./statement-cache.js";

export async function bindMessage(session: SessionPort, state: ExtendedState, frame: Frame): Promise<void> {
  const view = BindView.from(frame.payload);
  if (isProtocolFault(view)) {
    session.fatal(protocolViolation(view));
    return;
  }
  let statement = state.statements.get(view.statement);
  if (statement === undefined) {
    session.fail(unknownStatement(view.statement), EXTENDED);
    return;
  }
  if (session.refuseInFailedBlock(statement.analysis, EXTENDED)) return;
  // Under a search_path that may shadow public, the names are resolved for this execution.
  const qualified = await qualifiedAtBind(session, state, statement.analysis);
  if (qualified === "failed") return;
  let analysis = qualified ?? statement.analysis;
  const moves = session.runtime.moves;
  if (moves !== undefined) {
    // Held while a move has its key; released once the batch's Sync is answered.
    const values = paramValues(view, statement, []);
    const admission = await moves.admit(session, [analysis], values instanceof PgError ? undefined : values);
    if (admission instanceof PgError) {
      session.fail(admission, EXTENDED);
      return;
    }
    moves.admitted(session, admission);
  }
  if (await refuseDatabaseFunctionCall(session, analysis, EXTENDED)) return;
  const router = session.runtime.router;
  let route: Route = router.route(analysis, undefined, session.searchPath());
  if (route.kind === "deferred") {
    if (bindsUntypedBinaryKey(view, statement, route.params)) {
      // Its type decides how to read it: ask a server, as PostgreSQL computes it at Parse.
      await learnParameterTypes(session, state, statement);
      if (state.skipping) return;
    }
    const params = paramValues(view, statement, route.params);
    if (params instanceof PgError) {
      session.fail(params, EXTENDED);
      return;
    }
    route = router.route(analysis, params, session.searchPath());
  }
  const preread = await prereadsAtBind(session, state, statement, analysis, route, frame.payload, () =>
    paramValues(view, statement!, []),
  );
  if (preread === "failed") return;
  if (preread !== null) {
    // The write with its reads' answers written in: routed again, with the same values bound.
    const params = paramValues(view, preread.statement, []);
    const rewritten =
      params instanceof PgError ? route : router.route(preread.analysis, params, session.searchPath());
    if (rewritten.kind !== "error") {
      ({ statement, analysis } = preread);
      route = rewritten;
      if (moves !== undefined) {
        const admission = await moves.admit(session, [analysis], params as ParamValue[]);
        if (admission instanceof PgError) {
          session.fail(admission, EXTENDED);
          return;
        }
        moves.admitted(session, admission);
      }
    }
  }
  session.observed.routed(route);
  if ((route.kind === "local" || route.kind === "multi-region") && statement.checked !== null) {
    // The proxy answers this portal itself: first the server's verdict on the Parse.
    await session.settle();
    await statement.checked;
    if (state.skipping) return;
  }
  if (route.kind === "local") {
    state.portals.set(view.portal, { statement, leg: null, local: route.what });
    session.relay.local({ bytes: Messages.bindComplete });
    return;
  }
  if (route.kind === "multi-region" && route.plan.kind === "scatter") {
    const bind = decodeBind(frame.payload);
    if (isProtocolFault(bind)) {
      session.fatal(protocolViolation(bind));
      return;
    }
    const scatter = new ScatterPortal(
      analysis,
      route.plan,
      boundParams(bind, statement.paramTypes),
      bind.resultFormats,
    );
    state.portals.set(view.portal, { statement, leg: null, local: null, scatter });
    session.relay.local({ bytes: Messages.bindComplete });
    return;
  }
  if (route.kind === "multi-region" && route.plan.kind === "distributed-write") {
    const bind = decodeBind(frame.payload);
    if (isProtocolFault(bind)) {
      session.fatal(protocolViolation(bind));
      return;
    }
    const distributed = new DistributedPortal(analysis, route.plan, copyBind(bind), statement.paramTypes);
    state.portals.set(view.portal, { statement, leg: null, local: null, distributed });
    session.relay.local({ bytes: Messages.bindComplete });
    return;
  }
  const portalName = view.portal;
  const sendBind = (leg: Leg, name: string): void => {
    session.relay.expect({ leg, kind: "bind", mode: "relay" });
    // The unnamed statement keeps its name on the backend: the Bind goes as the client sent it.
    leg.write(name === "" ? frame.bytes : renameBind(frame.payload, statement.backendNameBytes));
    state.portals.set(portalName, { statement, leg, local: null });
  };
  if (route.kind === "error" && route.refusal === "copy-across-regions" && isCopyToStdout(analysis)) {
    // The simple-query path answers it across regions: the hint names that path.
    route = { ...route, error: copyToNeedsSimpleQuery() };
  }
  let check: { leg: Leg; outcome: Promise<ShapeCheck> } | null = null;
  await session.runRouted(analysis, route, EXTENDED, (leg) => {
    const name = prepareOn(session, state, leg, statement);
    const copy = name === "" ? undefined : (leg.connection.preparedStatements.get(name) as BackendCopy);
    if (statement.resultShape !== null && copy !== undefined && copy.shape !== statement.resultShape) {
      // The client decodes rows by the columns it was told: a copy not known to have them is
      // described first, and nothing runs until it is (a write must not run to then fail).
      check = { leg, outcome: checkShape(session, leg, statement, copy) };
      return;
    }
    sendBind(leg, name);
  });
  if (check === null) return;
  const { leg, outcome } = check as { leg: Leg; outcome: Promise<ShapeCheck> };
  const checked = await outcome;
  if (checked === "changed") session.fail(resultTypeChanged(), EXTENDED);
  // "failed": the server's error went to the client, and the batch skips to its Sync.
  else if (checked === "same" && !state.skipping) sendBind(leg, statement.backendName);
}

/** True when a parameter the route needs is bound in binary with no type known for it yet. */
function bindsUntypedBinaryKey(
  view: BindView,
  statement: ClientStatement,
  needed: readonly number[],
): boolean {
  if (statement.describedTypes !== null) return false;
  return needed.some((n) => n <= view.paramCount && view.format(n - 1) !== 0 && !statement.paramTypes[n - 1]);
}

/**
 * Learns the statement's parameter types from a server's ParameterDescription (what the client
 * would get from Describe), without relaying it. Outside a block the connection is borrowed
 * and synced at once; inside one, the block's connection answers (after a Flush), so the types
 * are those the block sees.
 */
async function learnParameterTypes(
  session: SessionPort,
  state: ExtendedState,
  statement: ClientStatement,
): Promise<void> {
  const region = session.runtime.router.describeRegion(statement.analysis);
  await describeOnServer(session, state, statement, region, false);
  await session.settle();
}

/** The bound values the route needs, as text; binary keys of known types are decoded. */
function paramValues(
  view: BindView,
  statement: ClientStatement,
  needed: readonly number[],
): ParamValue[] | PgError {
  const values: ParamValue[] = [];
  for (let i = 0; i < view.paramCount; i++) {
    if (view.format(i) === 0) {
      values.push(view.text(i));
      continue;
    }
    const value = view.value(i);
    if (value === null) {
      values.push(null);
      continue;
    }
    const type = statement.paramTypes[i] || statement.describedTypes?.[i] || 0;
    const decoded = decodeBinaryParam(type, value);
    if (decoded === undefined) {
      if (needed.includes(i + 1)) return unreadableBinaryKey(i + 1, type);
      values.push(null);
      continue;
    }
    values.push(decoded);
  }
  return values;
}

/** A Bind with the statement name replaced by the backend's name for it (NUL included); the rest as sent. */
function renameBind(payload: Buffer, name: Buffer): Buffer {
  const portalEnd = payload.indexOf(0);
  const statementEnd = payload.indexOf(0, portalEnd + 1);
  const portal = payload.subarray(0, portalEnd + 1);
  const rest = payload.subarray(statementEnd + 1);
  const length = 4 + portal.length + name.length + rest.length;
  const header = Buffer.allocUnsafe(5);
  header[0] = FrontendCode.Bind;
  header.writeInt32BE(length, 1);
  return Buffer.concat([header, portal, name, rest], length + 1);
}

function isCopyToStdout(analysis: Analysis): boolean {
  try {
    const spec = copyStatement(analysis.text);
    return spec !== undefined && !spec.from && spec.target === "stdio";
  } catch {
    return false;
  }
}
