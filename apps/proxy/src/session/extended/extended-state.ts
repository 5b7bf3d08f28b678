import type { StatementMode } from "../../engine/statement-mode.js";
import type { Leg } from "../../executor/leg.js";
import type { ClientStatement } from "./client-statement.js";
import type { Portal } from "./portal.js";

/** The mode of every statement of an extended batch: answers wait for the batch's Sync. */
export const EXTENDED: StatementMode = { extended: true, final: false };

/**
 * The state of the client's extended protocol that the message handlers of this folder share,
 * owned by ExtendedQuery (extended-query.ts): statements and portals, the connections the batch
 * in flight touched, and the skip to Sync after an error.
 */
export interface ExtendedState {
  readonly statements: Map<string, ClientStatement>;
  readonly portals: Map<string, Portal>;
  /** The connections the batch wrote to: each gets the batch's Sync. */
  readonly touched: Set<Leg>;
  /** After an error, messages up to Sync are skipped, by the backends and the proxy alike. */
  skipping: boolean;
  /** Syncs whose ReadyForQuery the client has not been sent yet. */
  syncsPending: number;
  /** Outside a transaction block: the region this batch wrote in (a batch may not go on elsewhere). */
  batchWriteRegion: string | null;
  /** Between the first extended message and its Sync. */
  inBatch: boolean;
  /** Errors the client had been sent when the batch began: more at Sync means it failed. */
  errorsAtBatchStart: number;
  /**
   * Where the client's unnamed statement was last parsed: a Bind or Describe on that connection
   * with nothing written in between uses it as it is.
   */
  unnamed: { leg: Leg; statement: ClientStatement; writeCount: number } | null;
  /** The abort of the current batch, which must be written before its Sync. */
  aborting: Promise<void> | null;
  /** The batch's last Execute of a COPY FROM STDIN relayed to one backend (execute-message.ts). */
  copyFrom: CopyFromExecute | null;
}

/**
 * A COPY FROM STDIN executed through the extended protocol. PostgreSQL ignores Sync (and Flush)
 * while in copy-in mode, so a Sync the client sent behind the Execute but before its CopyDone or
 * CopyFail must not be answered: the backend never answers it.
 */
export interface CopyFromExecute {
  /** The client's `copyEnds` when the Execute was handled. */
  readonly copyEndsAtExecute: number;
  /** True once the backend entered copy-in mode; false if the Execute failed (or was skipped) instead. */
  readonly entered: Promise<boolean>;
}
