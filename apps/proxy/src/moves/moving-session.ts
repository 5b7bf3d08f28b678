import type { PgError } from "@geo/proto";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Leg } from "../executor/leg.js";
import type { Relay, Unit } from "../executor/relay.js";

/**
 * What the moves feature uses of a client's session: to hold its statements on a moving key, to
 * record first writes beside them, and to answer RELOCATE and REBALANCE through its relay.
 */
export interface MovingSession {
  readonly user: string;
  /** The open transaction block, if any, with its connections. */
  readonly txn: { readonly legs: { readonly size: number } } | null;
  readonly relay: Relay;
  readyForQuery(): Buffer;
  fail(error: PgError, mode: StatementMode): void;
  writeOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): void;
}
