import type { ScatterPlan } from "@geo/core";
import {
  BackendCode,
  decodeRowDescription,
  encodeQuery,
  type FieldDescription,
  type Frame,
  isProtocolFault,
  PgError,
} from "@geo/proto";
import { type Analysis, type PrereadAnswer, writePrereads } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Route } from "../routing/router.js";
import { allValues } from "../scatter/data-row.js";
import { gatherBoundExceeded } from "../scatter/errors.js";
import { errorOf } from "../scatter/region-channel.js";
import { type BoundParams, NO_PARAMS } from "../scatter/region-statement.js";
import { openScatter } from "../scatter/scatter-read.js";
import { typeNamesSql } from "../scatter/type-names.js";
import { FIRST_USER_OID } from "../scatter/typed-arrays.js";
import { stateRegion } from "./state-region.js";

/**
 * The planner's refusals a write gets for reading rows outside the regions it writes (and an
 * INSERT ... SELECT whose rows' keys cannot be read before they are selected).
 */
const READS_ELSEWHERE: ReadonlySet<string> = new Set([
  "write-reads-elsewhere",
  "replicated-write-from-rows",
  "unsplittable-insert",
]);

/** Errors of a read taken out of its write that mean it named the written row (correlated). */
const NAMES_THE_WRITE: ReadonlySet<string> = new Set(["42P01", "42703"]);

export type Collected = { readonly fields: readonly FieldDescription[]; readonly rows: (string | null)[][] };

/**
 * A write the planner refuses because it reads rows of other regions (a sub-query over another
 * region's rows, UPDATE ... FROM or DELETE ... USING a table spread over regions, INSERT ...
 * SELECT from everywhere) is answered by reading first: each such read runs on its own through
 * the proxy (so a read across regions is combined exactly, as any SELECT is), and the write is
 * planned again with the answers written in as constants of their exact types (`@geo/sql`
 * `writePrereads`). Inside a transaction block the reads run in the block; outside one they run
 * just before the write, as two statements would.
 *
 * Returns the rewritten write; null to keep the original plan (its refusal): nothing to read, a
 * type created by users (its OID differs between servers), or a rewrite still refused. "failed"
 * when a read failed (its error sent, as PostgreSQL would fail the write), or named the written
 * row: correlated, PostgreSQL fails it on its own with 42P01/42703, and the write's refusal is
 * sent (inside a block the failed read has failed the block, as the refusal fails it).
 */
export async function withPrereads(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<Analysis | "failed" | null> {
  const router = session.runtime.router;
  if (!mayReadElsewhere(session, analysis)) return null;
  const first = router.route(analysis, undefined, session.searchPath());
  if (!refusedForReadingElsewhere(first)) return null;
  const rewritten = await prereadWrite(session, analysis, first, mode, {
    read: (read) => collect(session, read, mode),
    typeNames: (fields) => typeNamesOf(session, fields, mode),
  });
  if (rewritten === null || rewritten === "failed") return rewritten;
  if (router.route(rewritten, undefined, session.searchPath()).kind === "error") return null;
  return rewritten;
}

/** Cheap checks first: a write reading no other table never needs its reads run first. */
export function mayReadElsewhere(session: SessionPort, analysis: Analysis): boolean {
  if (session.runtime.router.topology.regions.length === 1 || analysis.tables.length < 2) return false;
  return analysis.kind === "update" || analysis.kind === "delete" || analysis.kind === "insert";
}

/** True for the planner's refusal of a write that reads rows outside the regions it writes. */
export function refusedForReadingElsewhere(route: Route): route is Extract<Route, { kind: "error" }> {
  return route.kind === "error" && READS_ELSEWHERE.has(route.refusal ?? "");
}

/** How the reads taken out of a write are run: by simple query, or inside an extended batch. */
export interface PrereadRunner {
  /** A read's answer as text; null when it cannot be run exactly (the write keeps its refusal). */
  read(analysis: Analysis): Promise<Collected | PgError | null>;
  /** PostgreSQL's exact names of the answer's types, asked of the session's region. */
  typeNames(fields: readonly FieldDescription[]): Promise<string[] | null>;
}

/**
 * Runs the reads of a refused write and returns it rewritten with their answers as constants
 * (not yet routed: the caller routes it, with its parameters if it has any). See withPrereads
 * for null and "failed".
 */
export async function prereadWrite(
  session: SessionPort,
  analysis: Analysis,
  refusal: Extract<Route, { kind: "error" }>,
  mode: StatementMode,
  runner: PrereadRunner,
): Promise<Analysis | "failed" | null> {
  const router = session.runtime.router;
  const prereads = writePrereads(analysis.text);
  if (prereads === undefined) return null;
  const answers: PrereadAnswer[] = [];
  for (const read of prereads.reads) {
    const readAnalysis = router.analyze(read.sql);
    if (readAnalysis instanceof PgError) return null;
    const collected = await runner.read(readAnalysis);
    if (collected === null) return null;
    if (collected instanceof PgError) {
      // The write's own refusal, as if nothing had been read: inside a block the read's failure
      // has already ended the block there, as the refusal would have.
      const error = NAMES_THE_WRITE.has(collected.code) ? refusal.error : collected;
      if (error === refusal.error) session.observed.routed(refusal);
      session.fail(error, mode);
      return "failed";
    }
    if (collected.fields.some((field) => field.typeOid >= FIRST_USER_OID)) return null;
    const types = await runner.typeNames(collected.fields);
    if (types === null) return null;
    answers.push({
      columns: collected.fields.map((field, i) => ({ name: field.name, type: types[i]! })),
      rows: collected.rows,
    });
  }
  const rewritten = router.analyze(prereads.render(answers));
  return rewritten instanceof PgError ? null : rewritten;
}

/** Runs a read and keeps its answer as text; null when it does not route to one region or a scatter. */
async function collect(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<Collected | PgError | null> {
  const route = session.runtime.router.route(analysis, undefined, session.searchPath());
  if (route.kind === "region") return collectOnLeg(session, analysis, route, analysis.text, mode);
  if (route.kind === "error") return route.error;
  if (route.kind !== "multi-region" || route.plan.kind !== "scatter") return null;
  return collectScatter(session, analysis, route.plan, NO_PARAMS, mode);
}

/** A read over several regions, combined exactly as its SELECT would be, kept as text. */
export async function collectScatter(
  session: SessionPort,
  analysis: Analysis,
  plan: ScatterPlan,
  params: BoundParams,
  mode: StatementMode,
): Promise<Collected | PgError> {
  await session.quiesceActive();
  await session.relay.idle();
  try {
    const answer = await openScatter(session, { analysis, plan, params, resultFormats: [] }, mode);
    const rows: (string | null)[][] = [];
    const limits = session.runtime.config.gather;
    let bytes = 0;
    let failed = true;
    try {
      for (let row = await answer.rows.next(); row !== null; row = await answer.rows.next()) {
        // Held in memory and written into the statement: bounded as a gather is.
        bytes += row.length;
        if (rows.length >= limits.maxRows) throw gatherBoundExceeded("rows", limits.maxRows, plan.regions);
        if (bytes > limits.maxBytes) throw gatherBoundExceeded("bytes", limits.maxBytes, plan.regions);
        rows.push(textValues(row));
      }
      failed = false;
    } finally {
      await answer.rows.close(failed);
    }
    return { fields: answer.fields ?? [], rows };
  } catch (error) {
    if (error instanceof PgError) return error;
    throw error;
  }
}

/** A DataRow's values as text (the reads ask for text results). */
export function textValues(row: Buffer): (string | null)[] {
  return allValues(row).map((value) => (value === null ? null : value.toString("utf8")));
}

/** One statement on the session's connection to a region, its answer kept from the client. */
async function collectOnLeg(
  session: SessionPort,
  analysis: Analysis,
  route: Extract<Route, { kind: "region" }>,
  sql: string,
  mode: StatementMode,
): Promise<Collected | PgError> {
  const collector = new AnswerCollector(session.runtime.config.gather, route.region);
  await session.runRouted(analysis, route, mode, (leg) => {
    session.relay.expect({
      leg,
      kind: "query",
      mode: "silent",
      inspect: collector.inspect,
      done: (_unit, status) => session.afterReady(leg, status),
    });
    leg.write(encodeQuery({ sql }));
  });
  await session.relay.idle();
  return collector.answer();
}

/**
 * A read's answer kept from the client: its row shape and rows as text, or its error. Held in
 * memory and written into the statement, so bounded as a gather is (rows past a bound are dropped).
 */
export class AnswerCollector {
  private fields: readonly FieldDescription[] = [];
  private readonly rows: (string | null)[][] = [];
  private error: PgError | null = null;
  private bytes = 0;

  constructor(
    private readonly limits: { readonly maxRows: number; readonly maxBytes: number },
    private readonly region: string,
  ) {}

  readonly inspect = (frame: Frame): void => {
    switch (frame.code) {
      case BackendCode.RowDescription: {
        const description = decodeRowDescription(frame.payload);
        if (!isProtocolFault(description)) this.fields = description.fields;
        return;
      }
      case BackendCode.DataRow:
        this.bytes += frame.payload.length;
        if (this.rows.length >= this.limits.maxRows)
          this.error ??= gatherBoundExceeded("rows", this.limits.maxRows, [this.region]);
        else if (this.bytes > this.limits.maxBytes)
          this.error ??= gatherBoundExceeded("bytes", this.limits.maxBytes, [this.region]);
        if (this.error === null) this.rows.push(textValues(frame.payload));
        return;
      case BackendCode.ErrorResponse:
        this.error ??= errorOf(frame);
        return;
    }
  };

  answer(): Collected | PgError {
    return this.error ?? { fields: this.fields, rows: this.rows };
  }
}

/** PostgreSQL's exact names of the answer's types (typmod included), asked of the session's region. */
async function typeNamesOf(
  session: SessionPort,
  fields: readonly FieldDescription[],
  mode: StatementMode,
): Promise<string[] | null> {
  if (fields.length === 0) return [];
  const types = fields.map((field) => ({ oid: field.typeOid, typmod: field.typeModifier }));
  const route: Route = { kind: "region", region: stateRegion(session), readOnly: true, anywhere: false };
  const lookup = session.runtime.router.analyze("SELECT 1");
  if (lookup instanceof PgError) return null;
  const answer = await collectOnLeg(session, lookup, route, typeNamesSql(types), mode);
  if (answer instanceof PgError) return null;
  return namesInOrder(types, answer.rows);
}

/** The names a `typeNamesSql` answer gives, in the order of `types`; null when one is missing. */
export function namesInOrder(
  types: readonly { oid: number; typmod: number }[],
  rows: readonly (readonly (string | null)[])[],
): string[] | null {
  const names = new Map(rows.map(([oid, typmod, name]) => [`${oid}:${typmod}`, name]));
  const out: string[] = [];
  for (const type of types) {
    const name = names.get(`${type.oid}:${type.typmod}`);
    if (name === undefined || name === null) return null;
    out.push(name);
  }
  return out;
}
