import type { ParamValue } from "@geo/core";
import {
  decodeBind,
  encodeBind,
  encodeClose,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  type FieldDescription,
  isProtocolFault,
  Messages,
  PgError,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../../engine/session-port.js";
import type { StatementMode } from "../../engine/statement-mode.js";
import type { Route } from "../../routing/router.js";
import { type BoundParams, NO_PARAMS } from "../../scatter/region-statement.js";
import { boundParams } from "../../scatter/scatter-portal.js";
import { typeNamesSql } from "../../scatter/type-names.js";
import { stateRegion } from "../state-region.js";
import {
  AnswerCollector,
  type Collected,
  collectScatter,
  mayReadElsewhere,
  namesInOrder,
  prereadWrite,
  refusedForReadingElsewhere,
} from "../write-prereads.js";
import { backendNameOf, type ClientStatement } from "./client-statement.js";
import { describeOnServer } from "./describe-message.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";

/** The proxy's own statement and portal for a read, closed again before anything else is sent. */
const READ = "geo_preread";

/** A write refused for reading other regions, as it runs once its reads are answered. */
export interface PrereadWrite {
  /** The rewritten write as a statement of its own, typed as the client's statement is. */
  readonly statement: ClientStatement;
  readonly analysis: Analysis;
}

/**
 * The extended protocol's way to a write that reads rows of other regions (write-prereads.ts
 * explains the method): at Bind, with the values bound, each read runs with the client's
 * parameters (every `$n` typed as the server types it in the client's statement, so a read
 * using some of them parses alike) and the write is rewritten with the answers. Inside a
 * transaction block, or on a connection the session holds, the reads run in the middle of the
 * client's batch as a statement and portal of the proxy's own, flushed and closed; outside
 * one they borrow connections, as the two statements would run one after the other. Outside a
 * block, a batch that already ran something keeps the refusal: reads on other connections
 * would not see what the batch has done so far.
 *
 * Returns null to keep the refusal, "failed" when a read failed (its error sent; the batch
 * skips to its Sync).
 */
export async function prereadsAtBind(
  session: SessionPort,
  state: ExtendedState,
  statement: ClientStatement,
  analysis: Analysis,
  route: Route,
  payload: Buffer,
  values: () => ParamValue[] | PgError,
): Promise<PrereadWrite | "failed" | null> {
  if (!refusedForReadingElsewhere(route) || !mayReadElsewhere(session, analysis)) return null;
  if (session.txn === null && (session.batchLegs.size > 0 || state.batchWriteRegion !== null)) return null;
  const bind = decodeBind(payload);
  if (isProtocolFault(bind)) return null;
  if (statement.describedTypes === null && bind.params.length > 0) {
    // Every read is parsed with every parameter's type, which only a server can tell.
    const region = session.runtime.router.describeRegion(statement.analysis);
    await describeOnServer(session, state, statement, region, false);
    await session.settle();
    if (state.skipping) return "failed";
  }
  const types = bind.params.length === 0 ? [] : (statement.describedTypes ?? []);
  if (types.length !== bind.params.length || types.some((type) => type === 0)) return null;
  const bound = values();
  if (bound instanceof PgError) return null;
  const params = boundParams(bind, types);
  const router = session.runtime.router;
  const rewritten = await prereadWrite(session, analysis, route, EXTENDED, {
    read: async (read) => {
      // A read that names no parameter is run without the client's values: PostgreSQL cannot
      // type a parameter that a statement never mentions.
      const readParams = read.paramCount === 0 ? NO_PARAMS : params;
      let readRoute = router.route(read, undefined, session.searchPath());
      if (readRoute.kind === "deferred") readRoute = router.route(read, bound, session.searchPath());
      if (readRoute.kind === "error") return readRoute.error;
      if (readRoute.kind === "region")
        return readOnRegion(session, state, readRoute.region, read, readParams);
      if (readRoute.kind !== "multi-region" || readRoute.plan.kind !== "scatter") return null;
      return collectScatter(session, read, readRoute.plan, readParams, EXTENDED);
    },
    typeNames: async (fields) => typeNamesOf(session, state, fields),
  });
  if (rewritten === null || rewritten === "failed") return rewritten;
  const backendName = backendNameOf(rewritten.text, types);
  const derived: ClientStatement = {
    name: backendName,
    text: rewritten.text,
    paramTypes: types,
    analysis: rewritten,
    parsedAt: statement.parsedAt,
    backendName,
    backendNameBytes: Buffer.from(`${backendName}\0`),
    describedTypes: types,
    // Its rows are the client statement's (the same RETURNING list).
    resultShape: null,
    checked: statement.checked,
  };
  return { statement: derived, analysis: rewritten };
}

/**
 * One read on the session's connection to `region`, its answer kept from the client: in the
 * batch (flushed) where the session or its block holds that connection, else on a borrowed one
 * (synced and given back).
 */
async function readOnRegion(
  session: SessionPort,
  state: ExtendedState,
  region: string,
  analysis: Analysis,
  params: BoundParams,
): Promise<Collected | PgError> {
  const borrowed =
    session.txn === null && !session.batchLegs.has(region) && session.pinnedLeg?.region !== region;
  const mode: StatementMode = borrowed ? { extended: false, final: false } : EXTENDED;
  const route: Route = { kind: "region", region, readOnly: true, anywhere: false };
  const collector = new AnswerCollector(session.runtime.config.gather, region);
  const inspect = collector.inspect;
  await session.runRouted({ ...analysis, readOnly: true }, route, mode, (leg) => {
    const relay = session.relay;
    for (const kind of ["parse", "bind", "describe-portal", "execute", "close", "close"] as const)
      relay.expect({ leg, kind, mode: "silent", inspect });
    const unnamedKept = state.unnamed?.leg === leg && state.unnamed.writeCount === leg.writeCount;
    leg.write([
      encodeParse({ name: READ, sql: analysis.text, paramTypes: params.types }),
      encodeBind({
        portal: READ,
        statement: READ,
        paramFormats: params.formats,
        params: params.values,
        resultFormats: [],
      }),
      encodeDescribe({ target: "P", name: READ }),
      encodeExecute({ portal: READ, maxRows: 0 }),
      encodeClose({ target: "P", name: READ }),
      encodeClose({ target: "S", name: READ }),
    ]);
    if (borrowed) {
      relay.expect({ leg, kind: "sync", mode: "silent", done: () => session.releaseLeg(leg) });
      leg.write(Messages.sync);
      return;
    }
    leg.write(Messages.flush);
    // The client's unnamed statement is untouched by a named statement and portal.
    if (unnamedKept && state.unnamed !== null) state.unnamed.writeCount = leg.writeCount;
  });
  await session.settle();
  return collector.answer();
}

/** PostgreSQL's exact names of the answer's types (typmod included), asked of the session's region. */
async function typeNamesOf(
  session: SessionPort,
  state: ExtendedState,
  fields: readonly FieldDescription[],
): Promise<string[] | null> {
  if (fields.length === 0) return [];
  const types = fields.map((field) => ({ oid: field.typeOid, typmod: field.typeModifier }));
  const lookup = session.runtime.router.analyze(typeNamesSql(types));
  if (lookup instanceof PgError) return null;
  const answer = await readOnRegion(session, state, stateRegion(session), lookup, NO_PARAMS);
  if (answer instanceof PgError) return null;
  return namesInOrder(types, answer.rows);
}
