import { type Analysis, isTemporarySchema } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { Leg } from "../executor/leg.js";
import { SessionPins } from "./session-pins.js";
import { searchPathSchemas, UNKNOWN_SEARCH_PATH } from "./session-settings.js";
import { quoteLiteral } from "./settings/quote.js";
import { StringBlockSettings } from "./string-block-settings.js";
import type { Transaction } from "./transaction.js";

/** Records what a statement that succeeded changed in the session (settings, pins). */
export function recordEffects(
  session: SessionPort,
  batchPins: Analysis[],
  leg: Leg | null,
  analyses: readonly Analysis[],
): void {
  // A string sent whole may hold its own BEGIN ... ROLLBACK or ROLLBACK TO: follow them.
  const block = analyses.length > 1 ? new StringBlockSettings(session.settings, session.txn) : null;
  for (const analysis of analyses) {
    if (block !== null && analysis.transaction !== undefined) block.control(analysis.transaction);
    if (leg !== null && mayCreateTemporary(session, analysis)) pinForTemporary(session, leg);
    if (analysis.sessionEffects.length === 0) continue;
    session.settings.record(analysis);
    if (session.txn !== null && analysis.kind === "select") recordLocalSearchPath(session.txn, analysis);
    if (
      analysis.sessionEffects.some(
        (effect) =>
          (effect.kind === "deallocate" && effect.name === undefined) ||
          (effect.kind === "discard" && effect.value === "all"),
      )
    ) {
      session.extended.forgetStatements();
      session.sqlStatements.clear();
    }
    if (leg !== null) recordReportedValues(session, leg, analysis);
    // Mid-batch outside a block the batch may still fail and roll back: removals wait for Sync.
    const batchOpen = session.txn === null && session.extended.inBatch;
    if (batchOpen) batchPins.push(analysis);
    session.pins.record(analysis, session.txn !== null || batchOpen);
    if (leg === null) continue;
    const changesSettings = analysis.sessionEffects.some(
      (effect) =>
        !effect.local &&
        (effect.kind === "set" ||
          effect.kind === "reset" ||
          effect.kind === "set-config" ||
          effect.kind === "discard"),
    );
    if (changesSettings) {
      if (session.txn !== null) session.txn.settingsLegs.add(leg);
      else session.settings.markApplied(leg.connection.appliedSettings);
    }
    if (
      analysis.sessionEffects.some(
        (effect) =>
          effect.kind === "set-config" &&
          !effect.local &&
          (effect.name === undefined || effect.value === undefined),
      )
    ) {
      // set_config of a value (or name) the proxy cannot know, computed or a parameter: the
      // setting lives on this connection only. The session keeps the connection, as after a
      // statement it could not read, and the connection is reset before anyone else uses it.
      session.pins.holdUnknown();
      leg.connection.markDirty("full");
      if (session.pinnedLeg === null) {
        session.legs.pin(leg);
        session.log.info(
          { region: leg.region },
          "session pinned to its connection (a setting the proxy cannot replay)",
        );
      }
    }
    if (SessionPins.pins(analysis) && session.pins.pinned && session.pinnedLeg === null) {
      session.legs.pin(leg);
      leg.connection.markDirty("full");
      session.log.info({ region: leg.region }, "session pinned to its connection");
    }
  }
  unpinIfFree(session);
}

/**
 * A CREATE of an unqualified name goes to the first schema of the search_path that exists, and
 * when that is `pg_temp` the object is temporary: it lives on this server session only. Whether
 * an earlier schema of the path exists only the catalog knows, so a path naming pg_temp anywhere
 * is taken as making the object temporary (kept on its connection: always safe).
 */
function mayCreateTemporary(session: SessionPort, analysis: Analysis): boolean {
  const creates =
    (analysis.kind === "ddl" && analysis.command.startsWith("CREATE")) || analysis.flags.selectInto;
  if (!creates) return false;
  return session.searchPath()?.some((schema) => isTemporarySchema(schema)) === true;
}

function pinForTemporary(session: SessionPort, leg: Leg): void {
  session.pins.holdTemporary("search_path");
  if (session.pinnedLeg !== null) return;
  session.legs.pin(leg);
  leg.connection.markDirty("full");
  session.log.info({ region: leg.region }, "session pinned to its connection (an object created in pg_temp)");
}

/**
 * `SELECT set_config('search_path', ..., true)` sets the block's search_path as SET LOCAL does (a
 * SET LOCAL statement is recorded where it runs, session-statement.ts): the block's later names
 * are resolved under it, and connections the block opens later get it with their BEGIN.
 */
function recordLocalSearchPath(txn: Transaction, analysis: Analysis): void {
  for (const effect of analysis.sessionEffects) {
    if (effect.kind !== "set-config" || !effect.local) continue;
    const name = effect.name?.toLowerCase();
    if (name !== undefined && name !== "search_path") continue;
    if (name === undefined || effect.value === undefined) {
      // Unreadable, so not replayed on connections opened later: every name is resolved by the catalog.
      txn.localSettings.push({ sql: null, searchPath: UNKNOWN_SEARCH_PATH });
      continue;
    }
    const sql = `SELECT pg_catalog.set_config('search_path', ${quoteLiteral(effect.value)}, true)`;
    txn.localSettings.push({ sql, searchPath: searchPathSchemas(sql) });
  }
}

/**
 * `SET DateStyle TO ymd` changes only part of the setting: replayed alone on a connection whose
 * DateStyle differs it would give another value. The value the server reported instead is
 * what the session has, so that is what is kept.
 */
function recordReportedValues(session: SessionPort, leg: Leg, analysis: Analysis): void {
  for (const effect of analysis.sessionEffects) {
    if (effect.kind !== "set" || effect.local || effect.name?.toLowerCase() !== "datestyle") continue;
    const reported = leg.connection.parameters.get("DateStyle");
    if (reported !== undefined) session.settings.setValue("DateStyle", reported);
  }
}

/** At Sync: a batch that succeeded outside a block committed its UNLISTEN, CLOSE... */
export function settleBatchPins(session: SessionPort, batchPins: Analysis[], batchFailed: boolean): void {
  const held = batchPins.splice(0);
  if (batchFailed || session.txn !== null) return;
  for (const analysis of held) session.pins.record(analysis, false);
  unpinIfFree(session);
}

/**
 * Gives the pinned connection back once nothing pins the client to it. Never inside a block,
 * nor mid-batch (the batch's implicit transaction is still open there): Sync calls it again.
 */
export function unpinIfFree(session: SessionPort): void {
  const leg = session.pinnedLeg;
  if (
    leg === null ||
    session.ownConnection ||
    session.pins.pinned ||
    session.txn !== null ||
    session.extended.inBatch
  )
    return;
  session.legs.unpin();
  session.log.info({ region: leg.region }, "session unpinned from its connection");
  session.releaseLeg(leg);
}
