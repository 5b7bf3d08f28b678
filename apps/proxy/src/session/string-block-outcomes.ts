import { BackendCode, commandTag, type Frame } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";

/**
 * Counts the blocks that a query string sent whole to one region ends (`BEGIN; ...; COMMIT;` as
 * one Query), from the region's own command tags as they pass: PostgreSQL answers each statement
 * of the string with one CommandComplete, `COMMIT` for a block committed and `ROLLBACK` for one
 * rolled back (a COMMIT of a failed block included). A COMMIT or ROLLBACK with no block open (the
 * string's implicit one) ends nothing the client opened and is not counted, as the proxy does not
 * count a statement outside a block. Undefined when the string holds no COMMIT or ROLLBACK.
 */
export function blockEndsOfString(
  session: SessionPort,
  analyses: readonly Analysis[],
): ((frame: Frame) => void) | undefined {
  if (analyses.length < 2) return undefined;
  const ends = (analysis: Analysis): boolean => {
    const action = analysis.transaction?.action;
    return action === "commit" || action === "rollback";
  };
  if (!analyses.some(ends)) return undefined;
  // A block the client opened before this string, on this region's connection.
  let open = session.txn !== null && !session.txn.implicit;
  // The n-th COMMIT or ROLLBACK tag answers the n-th statement that ends a block (END and ABORT
  // included): whether it chains the next block is in its analysis.
  const endings = analyses.filter(ends);
  let ended = 0;
  return (frame) => {
    if (frame.code !== BackendCode.CommandComplete) return;
    const tag = commandTag(frame.payload);
    switch (tag) {
      case "BEGIN":
      case "START TRANSACTION":
        open = true;
        return;
      case "COMMIT":
      case "ROLLBACK": {
        if (!open) {
          ended++;
          return;
        }
        const committed = tag === "COMMIT";
        session.runtime.observability.blockEnded(committed ? "commit" : "rollback", committed);
        // AND CHAIN opens the next block at once, with no BEGIN of its own.
        open = endings[ended++]?.transaction?.chain === true;
        return;
      }
      case "PREPARE TRANSACTION":
        // Counted by nobody until the client commits or rolls back the prepared transaction.
        open = false;
        return;
    }
  };
}
