import { encodeExecute, type Frame, FrontendCode, Messages, type PgError } from "@geo/proto";
import type { ExtendedBatch, SessionPort } from "../engine/session-port.js";
import { refuseBatchAcrossRegions } from "../errors/catalog.js";
import type { Leg } from "../executor/leg.js";
import { bindMessage } from "./extended/bind-message.js";
import type { ClientStatement } from "./extended/client-statement.js";
import { closeMessage } from "./extended/close-message.js";
import { describeMessage } from "./extended/describe-message.js";
import { executeMessage } from "./extended/execute-message.js";
import type { CopyFromExecute, ExtendedState } from "./extended/extended-state.js";
import { parseMessage } from "./extended/parse-message.js";
import type { Portal } from "./extended/portal.js";
import { closeOwnCopy } from "./extended/statement-cache.js";
import { syncMessage } from "./extended/sync-message.js";

/** The portal name the proxy executes to fail a backend's batch on purpose (it never exists). */
const ABORT_PORTAL = "geoproxy abort";

/**
 * The extended query protocol. Parse is answered by the proxy, which keeps the statement; Bind
 * decides the route from the bound values and prepares the statement on the chosen connection
 * if that connection has no copy newer than the client's Parse; Describe, Execute and Close go
 * to the connection holding the portal. Messages are written to backends as they come
 * (pipelined); answers are put back in order by the relay. After an error everything up to Sync
 * is skipped, by the backends and by the proxy alike.
 *
 * This class owns the protocol's state (ExtendedState) and dispatches each message to its
 * handler in extended/: parse-message.ts, bind-message.ts, describe-message.ts,
 * execute-message.ts, close-message.ts, sync-message.ts; the backend copies of statements are
 * statement-cache.ts's, SQL cursors reached by protocol messages sql-cursor.ts's.
 */
export class ExtendedQuery implements ExtendedState, ExtendedBatch {
  readonly statements = new Map<string, ClientStatement>();
  readonly portals = new Map<string, Portal>();
  readonly touched = new Set<Leg>();
  skipping = false;
  syncsPending = 0;
  batchWriteRegion: string | null = null;
  inBatch = false;
  errorsAtBatchStart = 0;
  unnamed: { leg: Leg; statement: ClientStatement; writeCount: number } | null = null;
  aborting: Promise<void> | null = null;
  copyFrom: CopyFromExecute | null = null;

  constructor(private readonly session: SessionPort) {}

  touch(leg: Leg): void {
    this.touched.add(leg);
  }

  /** A backend error was sent to the client: skip its messages up to Sync if it was not sent yet. */
  onError(): void {
    if (this.syncsPending === 0) this.skipping = true;
  }

  forgetStatement(name: string): boolean {
    const statement = name === "" ? undefined : this.statements.get(name);
    if (statement === undefined) return false;
    this.statements.delete(name);
    closeOwnCopy(this.session, this, statement);
    return true;
  }

  holdsStatement(name: string): boolean {
    return name !== "" && this.statements.has(name);
  }

  forgetStatements(): void {
    for (const name of [...this.statements.keys()]) if (name !== "") this.statements.delete(name);
  }

  refuseAcross(written: string, attempted: string): PgError {
    return refuseBatchAcrossRegions(written, attempted);
  }

  /**
   * The proxy refuses a statement mid-batch: backends that already ran part of the batch outside
   * a transaction block must not commit it at Sync, so each is made to fail (as the batch would
   * have failed on one server), which rolls its part back.
   */
  abortBatch(): void {
    this.skipping = true;
    if (this.session.txn !== null) return;
    // Only the leg in use can have part of the batch in flight; the others were synced... or not:
    // each gets the failing Execute in turn, after the previous one answered.
    const legs = [...this.touched].filter((leg) => leg.broken === null);
    this.aborting = (async () => {
      for (const leg of legs) {
        await this.session.activate(leg);
        this.session.relay.expect({ leg, kind: "execute", mode: "silent", expectError: true });
        leg.write(encodeExecute({ portal: ABORT_PORTAL, maxRows: 0 }));
      }
    })();
  }

  async handle(frame: Frame): Promise<void> {
    if (frame.code === FrontendCode.Sync) {
      await syncMessage(this.session, this);
      return;
    }
    if (!this.inBatch) this.errorsAtBatchStart = this.session.relay.errorsSent;
    this.inBatch = true;
    if (this.skipping) return;
    switch (frame.code) {
      case FrontendCode.Parse:
        await parseMessage(this.session, this, frame);
        return;
      case FrontendCode.Bind:
        await bindMessage(this.session, this, frame);
        return;
      case FrontendCode.Describe:
        await describeMessage(this.session, this, frame);
        return;
      case FrontendCode.Execute:
        await executeMessage(this.session, this, frame);
        return;
      case FrontendCode.Close:
        await closeMessage(this.session, this, frame);
        return;
      case FrontendCode.Flush: {
        const leg = this.session.currentLeg;
        if (leg !== null && leg.outstanding > 0 && leg.broken === null) leg.write(Messages.flush);
        return;
      }
    }
  }
}
