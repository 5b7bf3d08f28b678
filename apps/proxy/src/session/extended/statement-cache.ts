import { encodeClose, encodeDescribe, encodeParse, Messages } from "@geo/proto";
import type { SessionPort } from "../../engine/session-port.js";
import type { Leg } from "../../executor/leg.js";
import type { Unit } from "../../executor/relay.js";
import { shapeOf } from "../result-shape.js";
import type { BackendCopy, ClientStatement, ShapeCheck } from "./client-statement.js";
import type { ExtendedState } from "./extended-state.js";

// The statement cache: each backend connection keeps copies of the client statements bound on
// it (`preparedStatements`, least recently used first), named after their text and types so
// clients share them, and bounded by `[pool] max_prepared_statements`.

/**
 * Makes sure the connection holds a copy of the statement at least as new as the client's
 * Parse, and returns its name there. The unnamed statement is parsed every time, as a client's
 * unnamed statement is meant to be.
 */
export function prepareOn(
  session: SessionPort,
  state: ExtendedState,
  leg: Leg,
  statement: ClientStatement,
  answersParse?: { done: NonNullable<Unit["done"]>; skipped: () => void },
): string {
  const relay = session.relay;
  // The client's Parse is answered by the server (relayed) when `answersParse` is given.
  const mode = answersParse === undefined ? "quiet" : "relay";
  if (statement.name === "") {
    const unnamed = state.unnamed;
    if (unnamed?.leg === leg && unnamed.statement === statement && unnamed.writeCount === leg.writeCount) {
      // Parsed there by the client's own Parse, and nothing written since could have replaced it.
      return "";
    }
    relay.expect({
      leg,
      kind: "parse",
      mode,
      done: answersParse?.done,
      skipped: answersParse?.skipped,
    });
    leg.write(encodeParse({ name: "", sql: statement.text, paramTypes: statement.paramTypes }));
    state.unnamed = { leg, statement, writeCount: leg.writeCount };
    return "";
  }
  const copies = leg.connection.preparedStatements;
  const name = statement.backendName;
  const existing = copies.get(name) as BackendCopy | undefined;
  if (existing !== undefined && existing.preparedAt > statement.parsedAt) {
    // Kept in the order of use: the first entries are the least recently used.
    copies.delete(name);
    copies.set(name, existing);
    return name;
  }
  const copy: BackendCopy = { preparedAt: session.runtime.nextSequence() };
  copies.delete(name);
  copies.set(name, copy);
  closeLeastRecentlyUsed(session, leg, name);
  const forget = (): void => {
    if (copies.get(name) === copy) copies.delete(name);
  };
  // Close first: an older copy may hold the name (closing a missing statement is not an error).
  relay.expect({ leg, kind: "close", mode: "silent" });
  relay.expect({
    leg,
    kind: "parse",
    mode,
    done: (unit, status) => {
      if (unit.failed) forget();
      answersParse?.done(unit, status);
    },
    skipped: () => {
      forget();
      answersParse?.skipped();
    },
  });
  leg.write([
    encodeClose({ target: "S", name }),
    encodeParse({ name, sql: statement.text, paramTypes: statement.paramTypes }),
  ]);
  return name;
}

/**
 * Keeps a connection's copies of client statements within `[pool] max_prepared_statements`: the
 * least recently used are closed on the server (a portal bound from one keeps working, as in
 * PostgreSQL) and prepared again there when next bound.
 */
function closeLeastRecentlyUsed(session: SessionPort, leg: Leg, keep: string): void {
  const copies = leg.connection.preparedStatements;
  const max = session.runtime.config.pool.maxPreparedStatements;
  if (copies.size <= max) return;
  const closing: Buffer[] = [];
  for (const name of copies.keys()) {
    if (copies.size <= max) break;
    if (name === keep) continue;
    copies.delete(name);
    session.relay.expect({ leg, kind: "close", mode: "silent" });
    closing.push(encodeClose({ target: "S", name }));
  }
  leg.write(closing);
}

/**
 * Describes `copy` of `statement` on `leg` (flushed, so the answer comes now) and compares its
 * columns with those the client was told. A copy with other columns is forgotten: every Bind
 * to it fails the same way until the client prepares the statement again, as on one server.
 */
export function checkShape(
  session: SessionPort,
  leg: Leg,
  statement: ClientStatement,
  copy: BackendCopy,
): Promise<ShapeCheck> {
  const relay = session.relay;
  return new Promise((resolve) => {
    let shape: string | null = null;
    relay.expect({
      leg,
      kind: "describe-statement",
      mode: "silent",
      inspect: (reply) => {
        shape = shapeOf(reply) ?? shape;
      },
      done: (unit) => {
        if (unit.failed || shape === null) return resolve("failed");
        copy.shape = shape;
        if (shape === statement.resultShape) return resolve("same");
        const copies = leg.connection.preparedStatements;
        if (copies.get(statement.backendName) === copy) copies.delete(statement.backendName);
        resolve("changed");
      },
      skipped: () => resolve("failed"),
    });
    leg.write([encodeDescribe({ target: "S", name: statement.backendName }), Messages.flush]);
  });
}

/**
 * With a connection of its own (session pooling) the client's statements are its alone there:
 * a deallocated one is closed on the server too, as its pg_prepared_statements would show,
 * unless another of its statements (same text and types) shares the copy.
 */
export function closeOwnCopy(session: SessionPort, state: ExtendedState, statement: ClientStatement): void {
  const leg = session.pinnedLeg;
  if (!session.ownConnection || leg === null || leg.broken !== null || leg !== session.currentLeg) return;
  for (const other of state.statements.values()) if (other.backendName === statement.backendName) return;
  const copies = leg.connection.preparedStatements;
  if (!copies.delete(statement.backendName)) return;
  session.relay.expect({ leg, kind: "close", mode: "silent" });
  leg.write([encodeClose({ target: "S", name: statement.backendName }), Messages.flush]);
}
