import {
  decodeQuery,
  encodeQuery,
  type Frame,
  isProtocolFault,
  Messages,
  PgError,
  protocolViolation,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { runCopyFromStdin } from "../copy/copy-in.js";
import { runCopyToStdout } from "../copy/copy-out.js";
import { commitAcrossRegions } from "../distributed/commit-across-regions.js";
import { readYourWrites } from "../distributed/read-your-writes.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { runTransactionControl } from "../engine/transaction-control.js";
import { cursorOutsideBlock } from "../errors/catalog.js";
import { runRestripeCommand } from "../ids/restripe-command.js";
import type { Admission } from "../moves/moves.js";
import type { Route } from "../routing/router.js";
import { unqualifiedNames } from "../routing/search-path.js";
import { runConsole } from "./console-statement.js";
import { refuseDatabaseFunctionCall } from "./database-function-calls.js";
import { withColumnList } from "./insert-columns.js";
import { changesNameResolution, namesToResolve, withQualifiedNames } from "./qualified-names.js";
import { refuseSessionSequences } from "./session-sequences.js";
import { runSessionStatement } from "./session-statement.js";
import { resetToStartup } from "./settings/reset-to-startup.js";
import { boundExecute, preparedElsewhere } from "./sql-prepared.js";
import { stateRegion } from "./state-region.js";
import { blockEndsOfString } from "./string-block-outcomes.js";
import type { Transaction } from "./transaction.js";
import { withPrereads } from "./write-prereads.js";

const FINAL: StatementMode = { extended: false, final: true };
const IN_BATCH: StatementMode = { extended: false, final: false };

/**
 * A simple Query. One statement is routed as is. Several that all go to one region are sent there
 * as one string, so PostgreSQL itself gives the string its implicit-transaction semantics. Several
 * that span regions run one at a time, inside one implicit block the proxy opens in each region
 * touched and commits at the end (or rolls back at the first error), as PostgreSQL would.
 */
export async function runSimpleQuery(session: SessionPort, frame: Frame): Promise<void> {
  // Usually nothing is in flight: waiting on an already settled promise still costs a turn.
  if (session.relay.pending > 0) await session.settle();
  const query = decodeQuery(frame.payload);
  if (isProtocolFault(query)) {
    session.fatal(protocolViolation(query));
    return;
  }
  const router = session.runtime.router;
  const analyses = session.fastLane.takeAnalyses(query.sql) ?? router.analyzeBatch(query.sql);
  if (analyses instanceof PgError) {
    // With one region there is nowhere else to send it: PostgreSQL answers with its own error
    // (its message, hint and position), or runs what its grammar reads and the proxy's does not.
    if (router.topology.regions.length === 1 && session.status() !== "E") {
      await session.forwardUnread(frame.bytes);
      return;
    }
    session.fail(analyses, FINAL);
    return;
  }
  if (analyses.length === 0) {
    session.relay.local({ bytes: Messages.emptyQueryResponse });
    session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  if (analyses.length === 1) {
    await runStatement(session, analyses[0]!, FINAL, frame.bytes);
    return;
  }
  await runBatch(session, analyses, frame.bytes);
}

/**
 * Runs one statement of a simple Query; resolves once its answer has been sent. With a directory
 * store it is first admitted (it waits while a move holds its key) and RELOCATE/REBALANCE run.
 */
export async function runStatement(
  session: SessionPort,
  given: Analysis,
  mode: StatementMode,
  queryBytes: Buffer | null,
): Promise<void> {
  // An EXECUTE of a statement the proxy holds runs as that statement (sql-prepared.ts).
  const bound = boundExecute(session, given);
  if (bound instanceof PgError) {
    if (!session.refuseInFailedBlock(given, mode)) session.fail(bound, mode);
    return;
  }
  let analysis = bound ?? given;
  if (bound !== null) queryBytes = null;
  // A function of the database that may read tables would see one region's rows only.
  if (await refuseDatabaseFunctionCall(session, analysis, mode)) return;
  // Unqualified names that the session's search_path may resolve away from public: resolved.
  const qualified = await withQualifiedNames(session, analysis, mode);
  if (qualified === "failed") return;
  if (qualified !== null) {
    analysis = qualified;
    queryBytes = null;
  }
  // An INSERT without a column list, refused because its keys cannot be read: with the list.
  const listed = await withColumnList(session, analysis, mode);
  if (listed === "failed") return;
  if (listed !== null) {
    analysis = listed;
    queryBytes = null;
  }
  // A write refused for reading other regions' rows: those reads first, then the write.
  const prepared = await withPrereads(session, analysis, mode);
  if (prepared === "failed") return;
  if (prepared !== null) {
    analysis = prepared;
    queryBytes = null;
  }
  if (analysis.console?.command === "restripe") {
    if (!session.refuseInFailedBlock(analysis, mode))
      await runRestripeCommand(session.runtime.restripe, session, analysis, mode);
    return;
  }
  const moves = session.runtime.moves;
  if (moves === undefined) return runAdmitted(session, analysis, mode, queryBytes);
  if (session.refuseInFailedBlock(analysis, mode)) return;
  if (await moves.runCommand(session, analysis, mode)) return;
  const admission = await moves.admit(session, [analysis]);
  if (admission instanceof PgError) {
    session.fail(admission, mode);
    return;
  }
  try {
    await runAdmitted(session, analysis, mode, queryBytes);
  } finally {
    admission.release();
  }
}

async function runAdmitted(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  queryBytes: Buffer | null,
): Promise<void> {
  if (session.refuseInFailedBlock(analysis, mode)) return;
  const route = cursorCheckedFirst(
    session,
    analysis,
    session.runtime.router.route(analysis, undefined, session.searchPath()),
  );
  // COPY whose rows live in several regions: the proxy splits COPY FROM STDIN's rows itself,
  // and answers COPY TO STDOUT as the SELECT it stands for is answered across regions.
  if (
    isCopyAcrossRegions(route) &&
    ((await runCopyFromStdin(session, analysis, mode)) || (await runCopyToStdout(session, analysis, mode)))
  )
    return;
  session.observed.routed(route);
  if (route.kind === "local") {
    switch (route.what) {
      case "transaction":
        await runTransactionControl(session, analysis, mode);
        return;
      case "session":
        await runSessionStatement(session, analysis, mode, analysis.text);
        return;
      case "console":
        runConsole(session, analysis, mode, true);
        return;
      case "empty":
        session.relay.local({ bytes: Messages.emptyQueryResponse });
        if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
        return;
    }
  }
  await forward(session, [analysis], route, mode, queryBytes ?? encodeQuery({ sql: analysis.text }));
}

/**
 * PostgreSQL checks that a cursor without WITH HOLD is declared inside a block before it reads
 * anything: outside one, its error comes first, as it would from one server, not the refusal of
 * a cursor over several regions.
 */
function cursorCheckedFirst(session: SessionPort, analysis: Analysis, route: Route): Route {
  if (route.kind !== "error" || route.refusal !== "cursor-across-regions" || session.txn !== null)
    return route;
  if (analysis.sessionEffects.some((effect) => effect.kind === "declare-with-hold")) return route;
  return { kind: "error", error: cursorOutsideBlock() };
}

async function forward(
  session: SessionPort,
  analyses: readonly Analysis[],
  route: Route,
  mode: StatementMode,
  bytes: Buffer,
): Promise<void> {
  // A string sent whole is one unit: any statement of it refused refuses it all, as unsent.
  if (analyses.length > 1 && refuseSessionSequences(session, analyses, mode)) return;
  const inspect = blockEndsOfString(session, analyses);
  const leg = await session.runRouted(analyses[0]!, route, mode, (l) => {
    session.relay.expect({
      leg: l,
      kind: "query",
      mode: "relay",
      dropReadyForQuery: !mode.final,
      inspect,
      done: (unit, status) => {
        if (!unit.failed) session.recordEffects(l, analyses);
        session.afterReady(l, status);
      },
    });
    l.write(bytes);
  });
  if (leg !== null) await session.relay.idle();
}

async function runBatch(session: SessionPort, analyses: readonly Analysis[], bytes: Buffer): Promise<void> {
  const admission = await session.runtime.moves?.admit(session, analyses);
  if (admission instanceof PgError) {
    session.fail(admission, FINAL);
    return;
  }
  try {
    await runBatchAdmitted(session, analyses, bytes, admission);
  } finally {
    admission?.release();
  }
}

async function runBatchAdmitted(
  session: SessionPort,
  analyses: readonly Analysis[],
  bytes: Buffer,
  admission: Admission | undefined,
): Promise<void> {
  const router = session.runtime.router;
  const searchPath = session.searchPath();
  const routes = analyses.map((analysis) => router.route(analysis, undefined, searchPath));
  // A name that only the catalog can place keeps the statements apart (runStatement resolves it).
  // So does a call of a database function, which runStatement judges.
  const several = router.topology.regions.length > 1;
  const resolving =
    analyses.some(
      (analysis) =>
        namesToResolve(session, analysis).length > 0 || (several && analysis.flags.userFunctions.length > 0),
    ) ||
    (several &&
      analyses.some(changesNameResolution) &&
      analyses.some((a) => unqualifiedNames(a.tables).length > 0));
  const region = resolving ? null : singleRegion(session, analyses, routes);
  if (region !== null) {
    const readOnly = routes.every((route) => route.kind !== "region" || route.readOnly);
    session.observed.routedTogether(routes, region);
    // One string, one connection: a replica could not run whatever of it writes or changes the session.
    const route: Route = { kind: "region", region, readOnly, anywhere: false, onPrimary: true };
    await forward(session, analyses, route, FINAL, bytes);
    return;
  }
  // One statement at a time from here: each is admitted on its own.
  admission?.release();
  const relay = session.relay;
  // One string, one report of the settings it changed, as PostgreSQL sends it before ReadyForQuery.
  relay.holdReports();
  try {
    await runEach(session, analyses);
  } catch (error) {
    relay.releaseReports();
    throw error;
  }
  relay.local({ bytes: () => Buffer.concat([...relay.releaseReports(), session.readyForQuery()]) });
}

/** The statements of a string one at a time, inside the implicit block the string opens. */
async function runEach(session: SessionPort, analyses: readonly Analysis[]): Promise<void> {
  const relay = session.relay;
  if (session.txn === null) session.block.begin("BEGIN", true, session.settings.snapshot());
  let failed = false;
  for (let i = 0; i < analyses.length; i++) {
    const before = relay.errorsSent;
    await runStatement(session, analyses[i]!, IN_BATCH, null);
    await relay.idle();
    if (relay.errorsSent > before) {
      failed = true;
      break;
    }
    if (session.txn === null && i < analyses.length - 1) {
      session.block.begin("BEGIN", true, session.settings.snapshot());
    }
  }
  const txn = session.txn;
  if (txn?.implicit === true) await finishImplicit(session, txn, !failed);
}

/** The region every statement of the string goes to, or null when they span regions. */
function singleRegion(
  session: SessionPort,
  analyses: readonly Analysis[],
  routes: readonly Route[],
): string | null {
  if (session.status() === "E") return null;
  // A RESET of a setting the client connected with means "back to the startup value", which the
  // server, whose reset values are the pooled connection's, cannot know: each statement runs on
  // its own then (session-statement.ts sends that RESET as the SETs it means for this client).
  if (analyses.some((analysis) => resetToStartup(session.settings, analysis, true) !== null)) return null;
  // So does a DEALLOCATE of a statement prepared with the protocol, which the proxy holds, and
  // a PREPARE, EXECUTE or DEALLOCATE of an SQL statement the proxy holds or would hold.
  if (analyses.some((analysis) => deallocatesProtocolStatement(session, analysis))) return null;
  if (analyses.some((analysis) => touchesHeldStatement(session, analysis))) return null;
  let region: string | null = null;
  for (const [i, route] of routes.entries()) {
    if (route.kind === "region") {
      if (route.anywhere) continue;
      // Where this statement would run on its own: a read of a replicated table the session
      // wrote at its writer goes there (read-your-writes), and so must the string holding it.
      const own = readYourWrites(session, analyses[i]!, route.region, route.readOnly);
      if (region === null) region = own;
      else if (region !== own) return null;
    } else if (route.kind !== "local" || (route.what !== "session" && route.what !== "transaction")) {
      return null;
    }
  }
  const chosen = region ?? stateRegion(session);
  const txn = session.txn;
  if (txn !== null) for (const held of txn.legs.regions()) if (held !== chosen) return null;
  return chosen;
}

/** Ends the implicit block of a string that spanned regions: commit, or roll back after an error. */
async function finishImplicit(session: SessionPort, txn: Transaction, commit: boolean): Promise<void> {
  const legs = [...txn.legs.values()];
  const primary = txn.primaryLeg();
  let committed = commit;
  const twoPhase = commit && txn.writeRegions.size > 1;
  if (twoPhase) {
    // Writes in several regions: one two-phase commit; a refusal is the string's last answer.
    await session.settle();
    const error = await commitAcrossRegions(session, txn);
    if (error !== null) {
      committed = false;
      session.relay.error(error, false);
    }
  } else {
    for (const leg of legs) {
      if (leg === primary) continue;
      await session.runOnLeg(leg, commit ? "COMMIT" : "ROLLBACK", "quiet", false);
    }
    if (primary !== undefined) {
      await session.runOnLeg(primary, commit ? "COMMIT" : "ROLLBACK", "quiet", false, (unit) => {
        if (unit.failed) committed = false;
      });
    }
  }
  await session.relay.idle();
  session.block.end();
  if (!twoPhase) session.runtime.observability.blockEnded(commit ? "commit" : "rollback", committed);
  if (!committed) session.settings.restore(txn.settingsBefore);
  txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
  for (const leg of legs) session.releaseLeg(leg);
}

function touchesHeldStatement(session: SessionPort, analysis: Analysis): boolean {
  for (const effect of analysis.sessionEffects) {
    if (
      (effect.kind === "execute" || effect.kind === "prepare") &&
      session.sqlStatements.has(effect.name ?? "")
    ) {
      return true;
    }
    if (effect.kind === "deallocate" && effect.name !== undefined && session.sqlStatements.has(effect.name)) {
      return true;
    }
    if (effect.kind === "prepare") {
      if (preparedElsewhere(session, analysis, stateRegion(session)) !== null) return true;
    }
  }
  return false;
}

function deallocatesProtocolStatement(session: SessionPort, analysis: Analysis): boolean {
  return analysis.sessionEffects.some(
    (effect) =>
      effect.kind === "deallocate" &&
      effect.name !== undefined &&
      session.extended.holdsStatement(effect.name),
  );
}

function isCopyAcrossRegions(route: Route): boolean {
  return (
    route.kind === "error" &&
    (route.refusal === "copy-from-across-regions" || route.refusal === "copy-across-regions")
  );
}
