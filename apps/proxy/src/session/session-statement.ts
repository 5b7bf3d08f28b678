import { encodeCommandComplete, encodeQuery } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { refuseHeldExecuteExtended, refuseSqlPrepareAcrossRegions } from "../errors/catalog.js";
import type { Route } from "../routing/router.js";
import { localSearchPathOf } from "./session-settings.js";
import { resetToStartup, sendResetToStartup } from "./settings/reset-to-startup.js";
import { heldNameInUse, preparedElsewhere, prepareHeld } from "./sql-prepared.js";
import { stateRegion } from "./state-region.js";

/** SET, RESET, DISCARD, LISTEN...: run where the session's state lives, then tracked. */
export async function runSessionStatement(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  sql: string,
): Promise<void> {
  const region = stateRegion(session);
  const effect = analysis.sessionEffects.length === 1 ? analysis.sessionEffects[0]! : undefined;
  if (
    effect?.kind === "deallocate" &&
    effect.name !== undefined &&
    session.extended.forgetStatement(effect.name)
  ) {
    // A statement the client prepared with the protocol (psycopg deallocates its own so): the
    // proxy holds it, under its own name on the servers, so the proxy answers. Like PostgreSQL's
    // DEALLOCATE, it is not undone by a ROLLBACK.
    session.relay.local({ bytes: encodeCommandComplete({ tag: "DEALLOCATE" }) });
    if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  if (
    effect?.kind === "deallocate" &&
    effect.name !== undefined &&
    session.sqlStatements.forget(effect.name)
  ) {
    session.relay.local({ bytes: encodeCommandComplete({ tag: "DEALLOCATE" }) });
    if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
    return;
  }
  // A simple query's EXECUTE of a held statement never gets here (simple-query.ts binds it).
  if (effect?.kind === "execute" && session.sqlStatements.has(effect.name ?? "")) {
    session.fail(refuseHeldExecuteExtended(effect.name ?? ""), mode);
    return;
  }
  const inUse = heldNameInUse(session, analysis);
  if (inUse !== null) {
    session.fail(inUse, mode);
    return;
  }
  const elsewhere = preparedElsewhere(session, analysis, region);
  if (elsewhere !== null && effect?.kind === "prepare") {
    if (mode.extended) session.fail(refuseSqlPrepareAcrossRegions(region, elsewhere), mode);
    else await prepareHeld(session, analysis, region, effect.name ?? "", mode);
    return;
  }
  const route: Route = { kind: "region", region, readOnly: true, anywhere: false };
  // RESET, RESET ALL, DISCARD ALL return to the client's startup values (settings/reset-to-startup.ts).
  const reset = resetToStartup(session.settings, analysis, session.txn !== null);
  await session.runRouted(analysis, route, mode, (leg) => {
    if (reset !== null) {
      sendResetToStartup(session, leg, analysis, reset, mode);
      return;
    }
    if (mode.extended) {
      session.writeOnLeg(leg, sql, "relay", true, (unit) => {
        if (!unit.failed) session.recordEffects(leg, [analysis]);
      });
      return;
    }
    session.relay.expect({
      leg,
      kind: "query",
      mode: "relay",
      dropReadyForQuery: !mode.final,
      done: (unit, status) => {
        if (!unit.failed) session.recordEffects(leg, [analysis]);
        session.afterReady(leg, status);
      },
    });
    leg.write(encodeQuery({ sql }));
  });
  const before = session.relay.errorsSent;
  await session.settle();
  const txn = session.txn;
  const settingsOnly = analysis.sessionEffects.every(
    (effect) => effect.kind === "set" || effect.kind === "reset" || effect.kind === "set-config",
  );
  if (
    txn === null ||
    session.relay.errorsSent > before ||
    !settingsOnly ||
    analysis.sessionEffects.length === 0
  ) {
    return;
  }
  // Inside a block a setting holds in every region the block reaches: the legs already open get
  // it now, later ones with their BEGIN (SET LOCAL) or with the session's settings (SET).
  const primary = txn.primaryLeg();
  for (const leg of [...txn.legs.values()]) {
    if (leg === primary || leg.broken !== null) continue;
    await session.runOnLeg(leg, sql, "quiet", mode.extended);
    if (analysis.sessionEffects.some((effect) => !effect.local)) txn.settingsLegs.add(leg);
  }
  if (analysis.sessionEffects.every((effect) => effect.local))
    txn.localSettings.push({ sql, searchPath: localSearchPathOf(analysis, sql) });
  await session.settle();
}
