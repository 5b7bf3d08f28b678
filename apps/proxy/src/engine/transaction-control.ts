import {
  BackendCode,
  encodeBind,
  encodeCommandComplete,
  encodeExecute,
  encodeNoticeResponse,
  encodeParse,
  encodeQuery,
  PgError,
  SqlState,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { commitAcrossRegions } from "../distributed/commit-across-regions.js";
import { refuseClientPrepareAcrossRegions } from "../distributed/txn-errors.js";
import { refuseSecondWriteRegion } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import type { Route } from "../routing/router.js";
import type { Transaction } from "../session/transaction.js";
import type { SessionPort } from "./session-port.js";
import type { StatementMode } from "./statement-mode.js";

/*
 * The client's transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO,
 * PREPARE TRANSACTION, and their AND CHAIN forms) over a block that may span regions. The block's
 * state is the session's TransactionBlock; its connections are the LegSet's `block` marks.
 */

/** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO, PREPARE TRANSACTION. */
export async function runTransactionControl(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<void> {
  if (mode.extended && pipelineTransactionControl(session, analysis)) return;
  await session.quiesceActive();
  await session.relay.idle();
  const control = analysis.transaction!;
  const txn = session.txn;
  const tagOnly = (tag: string, notice?: PgError): void => {
    if (notice !== undefined) session.relay.local({ bytes: encodeNoticeResponse(notice) });
    session.relay.local({ bytes: encodeCommandComplete({ tag }) });
    if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  };
  switch (control.action) {
    case "begin": {
      if (txn === null) {
        const block = session.block.begin(analysis.text, false, session.settings.snapshot());
        const pinned = session.pinnedLeg;
        if (pinned !== null && pinned.broken === null) {
          await session.activate(pinned);
          beginOnPinned(session, pinned, block, mode.extended);
        }
        tagOnly(analysis.command);
      } else if (txn.implicit) {
        txn.implicit = false;
        tagOnly(analysis.command);
      } else {
        tagOnly(
          analysis.command,
          warning(SqlState.active_sql_transaction, "there is already a transaction in progress"),
        );
      }
      return;
    }
    case "commit":
    case "rollback":
    case "prepare": {
      if (txn === null) {
        const tag =
          control.action === "commit"
            ? "COMMIT"
            : control.action === "rollback"
              ? "ROLLBACK"
              : "PREPARE TRANSACTION";
        if (control.action === "prepare") {
          session.fail(
            new PgError({
              code: SqlState.no_active_sql_transaction,
              message: "there is no transaction in progress",
            }),
            mode,
          );
          return;
        }
        if (control.chain === true) {
          // PostgreSQL refuses a chain with no block to chain from (25P01).
          session.fail(
            new PgError({
              code: SqlState.no_active_sql_transaction,
              message: `${tag} AND CHAIN can only be used in transaction blocks`,
            }),
            mode,
          );
          return;
        }
        tagOnly(tag, warning(SqlState.no_active_sql_transaction, "there is no transaction in progress"));
        return;
      }
      await endTransaction(session, analysis, mode);
      return;
    }
    case "savepoint":
    case "release":
    case "rollback-to": {
      if (txn === null) {
        // PostgreSQL's own error (25P01) from the home region.
        await forwardToHome(session, analysis, mode);
        return;
      }
      const name = control.name ?? "";
      if (control.action === "savepoint") txn.savepoint(name, analysis.text, session.settings.snapshot());
      else {
        const before = txn.unwindTo(name, control.action === "rollback-to");
        if (before !== undefined) session.settings.restore(before);
      }
      if (control.action === "rollback-to") session.block.recover();
      const legs = [...txn.legs.values()];
      const primary = txn.primaryLeg();
      if (primary === undefined) {
        tagOnly(
          control.action === "savepoint"
            ? "SAVEPOINT"
            : control.action === "release"
              ? "RELEASE"
              : "ROLLBACK",
        );
        return;
      }
      for (const leg of legs)
        if (leg !== primary) await session.runOnLeg(leg, analysis.text, "silent", mode.extended);
      await session.runOnLeg(primary, analysis.text, "relay", mode.extended);
      if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
      await session.settle();
      return;
    }
    case "commit-prepared":
    case "rollback-prepared":
      await forwardToHome(session, analysis, mode);
      return;
  }
}

/**
 * BEGIN, and COMMIT or ROLLBACK of a block held on one connection, inside an extended batch:
 * handled without waiting for the answers before them. After an error a server holds its
 * answers, and skips every message, until the client's Sync; waiting here would never end
 * (libpq's pipeline mode sends BEGIN, statements, COMMIT and only then Sync). The server
 * decides the outcome, as it would alone: a COMMIT it skips leaves the block failed, and a
 * COMMIT of a failed block answers ROLLBACK. False when the general path must run.
 */
function pipelineTransactionControl(session: SessionPort, analysis: Analysis): boolean {
  const action = analysis.transaction!.action;
  const txn = session.txn;
  if (action === "begin") {
    if (txn !== null && !txn.implicit) return false;
    if (txn === null) {
      const block = session.block.begin(analysis.text, false, session.settings.snapshot());
      const pinned = session.pinnedLeg;
      // In line, as this path never waits: the pinned connection is the one in use or idle.
      if (pinned !== null && pinned.broken === null && (session.currentLeg ?? pinned) === pinned)
        beginOnPinned(session, pinned, block, true);
    } else txn.implicit = false;
    session.relay.local({ bytes: encodeCommandComplete({ tag: analysis.command }) });
    return true;
  }
  if ((action !== "commit" && action !== "rollback") || txn === null) return false;
  if (analysis.transaction!.chain === true) return false;
  if (txn.legs.size !== 1 || txn.writeRegions.size > 1) return false;
  const leg = txn.legs.values()[0]!;
  if (leg.broken !== null) return false;
  const commit = action === "commit" && !txn.failed;
  let committed = commit;
  const ended = (): void => {
    if (session.txn === txn) session.block.end();
    session.runtime.observability.blockEnded(action, committed);
    if (!committed) session.settings.restore(txn.settingsBefore);
    txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
    // Given back at the batch's Sync, once the server has answered it.
    if (leg !== session.pinnedLeg) session.holdForBatch(leg);
  };
  session.extended.touch(leg);
  session.relay.expect({ leg, kind: "parse", mode: "quiet" });
  session.relay.expect({ leg, kind: "bind", mode: "silent" });
  session.relay.expect({
    leg,
    kind: "execute",
    mode: "relay",
    inspect: (frame) => {
      // A failed block answers COMMIT with ROLLBACK.
      if (frame.code === BackendCode.CommandComplete && frame.payload.toString("latin1", 0, 8) === "ROLLBACK")
        committed = false;
    },
    done: (unit) => {
      if (unit.failed) committed = false;
      ended();
    },
  });
  leg.write([
    encodeParse({ name: "", sql: commit ? "COMMIT" : "ROLLBACK", paramTypes: [] }),
    encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
    encodeExecute({ portal: "", maxRows: 0 }),
  ]);
  // Statements after it in the batch run after the block on the server, failed or not.
  txn.ending = true;
  return true;
}

async function forwardToHome(session: SessionPort, analysis: Analysis, mode: StatementMode): Promise<void> {
  const home = session.runtime.router.topology.home.id;
  const route: Route = { kind: "region", region: home, readOnly: true, anywhere: false };
  const leg = await session.runRouted(analysis, route, mode, (l) => {
    if (mode.extended) {
      session.writeOnLeg(l, analysis.text, "relay", true);
      return;
    }
    session.relay.expect({
      leg: l,
      kind: "query",
      mode: "relay",
      dropReadyForQuery: !mode.final,
      done: (_unit, status) => session.afterReady(l, status),
    });
    l.write(encodeQuery({ sql: analysis.text }));
  });
  if (leg !== null) await session.settle();
}

/**
 * COMMIT or ROLLBACK of a block spread over legs: the read legs end first (silently), the
 * written leg's answer is the client's. A failed block (or ROLLBACK) rolls every leg back.
 */
async function endTransaction(session: SessionPort, analysis: Analysis, mode: StatementMode): Promise<void> {
  const txn = session.txn!;
  const action = analysis.transaction!.action;
  const commit = action === "commit" && txn.status !== "E";
  const chain = analysis.transaction!.chain === true;
  const legs = [...txn.legs.values()];
  if (action === "prepare" && txn.writeRegions.size > 1) {
    session.fail(refuseClientPrepareAcrossRegions([...txn.writeRegions]), mode);
    return;
  }
  if (action === "prepare" && legs.length > 1) {
    session.fail(refuseSecondWriteRegion(txn.writeRegion ?? legs[0]!.region, legs[1]!.region), mode);
    return;
  }
  if (action === "prepare" && legs.length === 0 && !txn.failed) {
    // Nothing ran in the block yet: PostgreSQL still prepares it (empty), so a server must.
    const opened = await session.legFor(
      session.pinnedLeg?.region ?? session.runtime.router.topology.home.id,
      false,
      mode,
    );
    if (opened instanceof PgError) {
      session.fail(opened, mode);
      return;
    }
    legs.push(opened);
  }
  const primary = txn.primaryLeg();
  let committed = commit;
  const twoPhase = commit && txn.writeRegions.size > 1;
  if (twoPhase) {
    const error = await commitAcrossRegions(session, txn);
    if (error === null) session.relay.local({ bytes: encodeCommandComplete({ tag: "COMMIT" }) });
    else {
      committed = false;
      session.relay.error(error, mode.extended);
    }
  } else {
    for (const leg of legs) {
      if (leg === primary) continue;
      await session.runOnLeg(leg, commit ? "COMMIT" : "ROLLBACK", "quiet", mode.extended, (unit) => {
        if (unit.failed) committed = false;
      });
    }
    if (primary === undefined) {
      session.relay.local({ bytes: encodeCommandComplete({ tag: commit ? "COMMIT" : "ROLLBACK" }) });
    } else {
      // The client's own statement where it applies (COMMIT AND CHAIN, ROLLBACK AND CHAIN,
      // PREPARE TRANSACTION); a failed block is rolled back, chained as the client asked.
      const sql =
        action === "prepare" || action === "rollback" || commit
          ? analysis.text
          : chain
            ? "ROLLBACK AND CHAIN"
            : "ROLLBACK";
      await session.runOnLeg(primary, sql, "relay", mode.extended, (unit) => {
        if (unit.failed) committed = false;
      });
    }
  }
  await session.settle();
  session.block.end();
  if (chain && action !== "prepare") {
    // AND CHAIN: a new block with the same characteristics begins at once. The written leg's
    // server began it already; other regions get the block's BEGIN when they are reached.
    const next = session.block.begin(txn.beginSql, false, session.settings.snapshot());
    if (!twoPhase && primary !== undefined && primary.broken === null) {
      next.legs.add(primary);
      legs.splice(legs.indexOf(primary), 1);
    }
  }
  if (!twoPhase) session.runtime.observability.blockEnded(action, committed);
  if (!committed) session.settings.restore(txn.settingsBefore);
  txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
  for (const leg of legs) {
    if (mode.extended && leg.broken === null && leg !== session.pinnedLeg) session.holdForBatch(leg);
    else session.releaseLeg(leg);
  }
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

function warning(code: PgError["code"], message: string): PgError {
  return new PgError({ code, message, severity: "WARNING" });
}

/**
 * A session pinned to its connection (session pooling, LISTEN, a temporary table...) begins its
 * block there at once, as one server would: until the block ends, its backend holds what an open
 * transaction holds (a listener's notifications wait in the queue; its snapshot may be taken).
 * The server's own BEGIN answer is dropped: the client gets the proxy's, as for any block.
 */
function beginOnPinned(session: SessionPort, pinned: Leg, block: Transaction, extended: boolean): void {
  block.legs.add(pinned);
  session.writeOnLeg(pinned, block.openingSql(), "quiet", extended);
}
