import { encodeBind, encodeExecute, encodeParse, encodeQuery } from "@geo/proto";
import type { SessionPort } from "../engine/session-port.js";
import type { Leg } from "../executor/leg.js";
import type { Unit } from "../executor/relay.js";

/**
 * Runs SQL of the proxy's own on a leg once the previous leg's answers are complete (answers of
 * two legs are never in flight at once, so they cannot interleave).
 */
export async function runOnLeg(
  session: SessionPort,
  leg: Leg,
  sql: string,
  mode: "relay" | "quiet" | "silent",
  extended: boolean,
  done?: Unit["done"],
): Promise<void> {
  await session.activate(leg);
  session.writeOnLeg(leg, sql, mode, extended, done);
}

/** Writes SQL of the proxy's own to the active leg, as a simple Query or, mid-batch, as Parse/Bind/Execute. */
export function writeOnLeg(
  session: SessionPort,
  leg: Leg,
  sql: string,
  mode: "relay" | "quiet" | "silent",
  extended: boolean,
  done?: Unit["done"],
): void {
  if (extended) {
    session.extended.touch(leg);
    session.relay.expect({ leg, kind: "parse", mode: "quiet" });
    session.relay.expect({ leg, kind: "bind", mode: "silent" });
    session.relay.expect({ leg, kind: "execute", mode, ...(done === undefined ? {} : { done }) });
    leg.write([
      encodeParse({ name: "", sql, paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
    ]);
    return;
  }
  session.relay.expect({
    leg,
    kind: "query",
    mode,
    dropReadyForQuery: true,
    ...(done === undefined ? {} : { done }),
  });
  leg.write(encodeQuery({ sql }));
}
