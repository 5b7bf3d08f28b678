import { BackendCode, type Frame, Messages } from "@geo/proto";
import { type Analysis, copyStatement } from "@geo/sql";
import type { SessionPort } from "../../engine/session-port.js";
import { runTransactionControl } from "../../engine/transaction-control.js";
import { runConsole } from "../console-statement.js";
import { runSessionStatement } from "../session-statement.js";
import { EXTENDED, type ExtendedState } from "./extended-state.js";
import { toCursor } from "./sql-cursor.js";

export async function executeMessage(
  session: SessionPort,
  state: ExtendedState,
  frame: Frame,
): Promise<void> {
  const portalName = readPortalName(frame.payload);
  const portal = portalName === null ? undefined : state.portals.get(portalName);
  if (portal === undefined) {
    await toCursor(session, portalName ?? "", frame, "execute");
    return;
  }
  const analysis = portal.statement.analysis;
  const lapsed = session.runtime.moves?.refusalAtExecute(session) ?? null;
  if (lapsed !== null) {
    session.fail(lapsed, EXTENDED);
    return;
  }
  if (portal.scatter !== undefined) {
    if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
    await portal.scatter.execute(session, readMaxRows(frame.payload));
    return;
  }
  if (portal.distributed !== undefined) {
    if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
    await portal.distributed.execute(session);
    return;
  }
  if (portal.leg === null) {
    if (session.refuseInFailedBlock(analysis, EXTENDED)) return;
    switch (portal.local) {
      case "transaction":
        await runTransactionControl(session, analysis, EXTENDED);
        return;
      case "session":
        await runSessionStatement(session, analysis, EXTENDED, analysis.text);
        return;
      case "console":
        runConsole(session, analysis, EXTENDED, false);
        return;
      case "empty":
      case null:
        session.relay.local({ bytes: Messages.emptyQueryResponse });
        return;
    }
  }
  const leg = await session.activate(portal.leg);
  if (session.log.isLevelEnabled("debug"))
    session.log.debug({ region: leg.region, sql: analysis.text }, "execute");
  // A COPY FROM STDIN: the Sync behind it waits to learn whether the backend entered copy-in.
  let entered: ((yes: boolean) => void) | undefined;
  if (isCopyFromStdin(analysis)) {
    const copyEndsAtExecute = session.client.copyEnds;
    state.copyFrom = { copyEndsAtExecute, entered: new Promise((resolve) => (entered = resolve)) };
  }
  const tell = entered;
  session.relay.expect({
    leg,
    kind: "execute",
    mode: "relay",
    inspect:
      tell === undefined
        ? undefined
        : (reply) => {
            if (reply.code === BackendCode.CopyInResponse) tell(true);
          },
    skipped: tell === undefined ? undefined : () => tell(false),
    done: (unit) => {
      tell?.(false);
      if (!unit.failed) session.recordEffects(leg, [analysis]);
    },
  });
  leg.write(frame.bytes);
}

function isCopyFromStdin(analysis: Analysis): boolean {
  if (analysis.kind !== "copy") return false;
  try {
    const spec = copyStatement(analysis.text);
    return spec?.from === true && spec.target === "stdio";
  } catch {
    return false;
  }
}

/** An Execute's row limit (0: all rows), after its portal name. */
function readMaxRows(payload: Buffer): number {
  const end = payload.indexOf(0);
  return end < 0 || payload.length < end + 5 ? 0 : payload.readInt32BE(end + 1);
}

function readPortalName(payload: Buffer): string | null {
  const end = payload.indexOf(0);
  return end < 0 ? null : payload.toString("utf8", 0, end);
}
