import type { Socket } from "node:net";
import type { Relay } from "../executor/relay.js";
import type { SessionPhase } from "../wire/client-connection.js";

/**
 * What observing a client connection reads of its session (SHOW CLIENTS, the metrics): a view
 * narrow enough that observability never depends on the session engine.
 */
export interface ObservableSession {
  readonly id: number;
  readonly user: string;
  readonly database: string;
  readonly socket: Socket;
  readonly relay: Relay;
  readonly phase: SessionPhase;
  /** True when nothing is in flight and no block is open. */
  readonly idle: boolean;
  /** The open transaction block, if any (only whether there is one is read). */
  readonly txn: object | null;
  readonly closed: Promise<void>;
}
