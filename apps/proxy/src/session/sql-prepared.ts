import { BackendCode, encodeCommandComplete, encodeQuery, PgError } from "@geo/proto";
import { type Analysis, bindSqlExecute, type ParameterType, preparedStatementText } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { duplicatePreparedStatement, refuseSqlExecuteArgument, sqlExecuteArity } from "../errors/catalog.js";
import type { Route } from "../routing/router.js";
import { allValues } from "../scatter/data-row.js";
import { quoteIdent, quoteLiteral } from "./settings/quote.js";

/**
 * Where the statement of an SQL-level PREPARE runs, when that is not entirely the region the
 * session's own prepared statements live in (`region`): the words for an error, or null when
 * PostgreSQL may keep it (always, with one region).
 */
export function preparedElsewhere(session: SessionPort, analysis: Analysis, region: string): string | null {
  const router = session.runtime.router;
  if (router.topology.regions.length === 1) return null;
  if (!analysis.sessionEffects.some((effect) => effect.kind === "prepare")) return null;
  const text = preparedStatementText(analysis.text);
  if (text === undefined) return null;
  const inner = router.analyze(text);
  // A statement the proxy cannot read is the server's to refuse at PREPARE.
  if (inner instanceof PgError) return null;
  const decided = router.plan(inner);
  if (decided.kind === "local" || (decided.kind === "single" && decided.region === region)) return null;
  return decided.kind === "single"
    ? `region ${decided.region}`
    : decided.kind === "scatter" || decided.kind === "distributed-write"
      ? `regions ${decided.regions.join(", ")}`
      : decided.kind === "deferred"
        ? "the region its arguments choose"
        : "no single region";
}

/**
 * A PREPARE the proxy holds: PostgreSQL still checks it (the client gets PostgreSQL's own error
 * for a bad statement or a name in use on that connection), and says its parameter types, in
 * one string on `region`'s connection; the server's copy is deallocated at once, so nothing of
 * it stays on a pooled connection. The client sees PREPARE's own answer.
 */
export async function prepareHeld(
  session: SessionPort,
  analysis: Analysis,
  region: string,
  name: string,
  mode: StatementMode,
): Promise<void> {
  const text = preparedStatementText(analysis.text);
  // preparedElsewhere has read this PREPARE: not one would be a bug, never a silent non-answer.
  if (text === undefined) throw new TypeError("prepareHeld needs one PREPARE statement");
  const types: ParameterType[] = [];
  let failed = false;
  const sql = [
    // On its own line: a trailing comment in the client's text must not swallow what follows.
    `${analysis.text}\n`,
    `SELECT n.nspname, t.typname FROM pg_catalog.pg_prepared_statements s,
      unnest(s.parameter_types) WITH ORDINALITY AS p(type, position)
      JOIN pg_catalog.pg_type t ON t.oid = p.type JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
      WHERE s.name = ${quoteLiteral(name)} ORDER BY p.position`,
    `DEALLOCATE ${quoteIdent(name)}`,
  ].join(";");
  const route: Route = { kind: "region", region, readOnly: true, anywhere: false };
  await session.runRouted(analysis, route, mode, (leg) => {
    session.relay.expect({
      leg,
      kind: "query",
      mode: "quiet",
      inspect: (frame) => {
        if (frame.code !== BackendCode.DataRow) return;
        const [schema, type] = allValues(frame.payload);
        if (schema && type) types.push({ schema: schema.toString("utf8"), name: type.toString("utf8") });
      },
      done: (unit, status) => {
        failed = unit.failed;
        session.afterReady(leg, status);
      },
    });
    leg.write(encodeQuery({ sql }));
  });
  session.relay.local({ bytes: () => (failed ? null : encodeCommandComplete({ tag: "PREPARE" })) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  await session.relay.idle();
  if (!failed) session.sqlStatements.hold(name, { text, types });
}

/**
 * An EXECUTE of a statement the proxy holds, as the statement it runs; null when `analysis` is
 * not one; the error when it cannot be written exactly.
 */
export function boundExecute(session: SessionPort, analysis: Analysis): Analysis | PgError | null {
  const effect = analysis.sessionEffects.length === 1 ? analysis.sessionEffects[0] : undefined;
  if (effect?.kind !== "execute") return null;
  const name = effect.name ?? "";
  const prepared = session.sqlStatements.get(name);
  if (prepared === undefined) return null;
  const binding = bindSqlExecute(prepared, analysis.text);
  switch (binding.kind) {
    case "arity":
      return sqlExecuteArity(name, binding.expected, binding.got);
    case "argument":
      return refuseSqlExecuteArgument(name, binding.position, binding.type);
    case "statement":
      return session.runtime.router.analyze(binding.sql);
  }
}

/** A PREPARE of a name the proxy holds: PostgreSQL's own answer, since its server never saw it. */
export function heldNameInUse(session: SessionPort, analysis: Analysis): PgError | null {
  for (const effect of analysis.sessionEffects) {
    if (effect.kind === "prepare" && session.sqlStatements.has(effect.name ?? "")) {
      return duplicatePreparedStatement(effect.name ?? "");
    }
  }
  return null;
}
