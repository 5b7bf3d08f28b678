import type { BackendConnection, FrameReceiver, Lease } from "@geo/pool";
import {
  BackendCode,
  decodeParameterStatus,
  decodeQuery,
  encodeCopyFail,
  encodeErrorResponse,
  encodeReadyForQuery,
  type Frame,
  FrontendCode,
  isProtocolFault,
  PgError,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { FastLanePort, SessionPort } from "../engine/session-port.js";
import { backendLost } from "../errors/catalog.js";
import { readsOnly } from "../moves/statement-keys.js";
import { endsSession, sqlStateOf } from "../observability/sql-state.js";
import type { Route } from "../routing/router.js";
import { namesToResolve } from "./qualified-names.js";

/** 'I': the ReadyForQuery status of a connection outside a transaction block. */
const IDLE = 0x49;

/** A SELECT cannot start COPY FROM STDIN; were a server to ask, it is refused as the relay refuses one it did not expect. */
const COPY_FAIL = encodeCopyFail({ message: "COPY FROM is not supported through geoproxy" });

/**
 * The fast lane: a simple Query that the general path (simple-query.ts and what it calls) would
 * send unchanged to one region's primary, outside a block and with nothing else in flight, is
 * written from the client's data handler to an idle connection of that region whose settings are
 * already the session's, and the backend's answer goes back to the client as it comes, joined into
 * one write per chunk read, until ReadyForQuery. No promise, no frame copy, no relay unit, no leg:
 * one object per session, reused by each statement.
 *
 * What the general path does around such a statement is done here too, with the same effects:
 * the route is counted (`observed.routed`), each ErrorResponse is counted by SQLSTATE, a
 * ParameterStatus updates what the client was told, a FATAL ends the client's session with the
 * server's, a broken connection yields the general path's 08006 and ReadyForQuery, a cancel
 * reaches the statement's backend and retires its connection, and the connection goes back to
 * its pool as `afterReady` gives one back. Whatever does not fit (the checks in `run`) takes the
 * general path, which gives the same answers: a test compares the two byte for byte.
 */
export class FastLane implements FrameReceiver, FastLanePort {
  /** The checkout of the statement in flight; null between statements. */
  private lease: Lease | null = null;
  private region = "";
  /** A cancel was aimed at the statement: its connection is closed, not pooled (the cancel may land late). */
  private retire = false;
  /** The server's FATAL went to the client: the client's session ends with the server's. */
  private fatalRelayed = false;
  /** Frames read and not yet written, as one view over the backend's read buffer. */
  private pending: Buffer | null = null;
  private pendingLength = 0;
  private flushScheduled = false;
  /** The backend is paused until the client's socket drains. */
  private paused = false;
  /** The Query text the lane analysed and left to the general path, and its analyses. */
  private declinedSql: string | null = null;
  private declinedAnalyses: readonly Analysis[] | PgError | undefined;
  /** Made once: a connection whose settings are the session's (a fresh closure per statement would be garbage). */
  private readonly settingsMatch: (connection: BackendConnection) => boolean;

  constructor(private readonly session: SessionPort) {
    this.settingsMatch = (connection) => session.settings.matches(connection.appliedSettings);
  }

  /**
   * Sends the client's Query (a view of its bytes, valid during this call) on the lane when it
   * fits, and returns true: the answer follows, then `client.laneFinished`. False when the general
   * path must take it: nothing was sent or counted then, and the general path takes the analyses
   * made here (`takeAnalyses`); a route decided here is decided again there, which touches nothing
   * but the router's ring of recent routes.
   */
  run(frame: Frame): boolean {
    const session = this.session;
    const runtime = session.runtime;
    this.declinedSql = null;
    this.declinedAnalyses = undefined;
    if (!runtime.config.server.fastLane || this.lease !== null || !this.sessionAtRest()) return false;
    let route: Route | null;
    try {
      route = this.laneRoute(frame);
    } catch {
      // This runs in the socket's data handler: whatever failed, the general path meets it again
      // and answers it as its own failure.
      route = null;
    }
    if (route === null || route.kind !== "region") return false;
    const region = route.region;
    const lease = runtime.pools.tryAcquireIf(region, session.user, session.database, this.settingsMatch);
    if (lease === null) return false;
    this.declinedSql = null;
    this.declinedAnalyses = undefined;
    session.observed.routed(route);
    this.lease = lease;
    this.region = region;
    this.retire = false;
    this.fatalRelayed = false;
    const connection = lease.connection;
    connection.setReceiver(this);
    // The view is written as it is: a socket's data chunks are fresh buffers, and the client's
    // framer never rewrites bytes it handed out, so it stays valid until the write is flushed.
    connection.write(frame.bytes);
    runtime.fastLane.statements++;
    return true;
  }

  /**
   * The route of the Query in `frame` when it fits the lane: one lane-shaped statement that the
   * general path would send unchanged to one region's primary. Null otherwise; the analyses made
   * are kept for the general path then.
   */
  private laneRoute(frame: Frame): Route | null {
    const session = this.session;
    const query = decodeQuery(frame.payload);
    if (isProtocolFault(query)) return null;
    const router = session.runtime.router;
    const analyses = router.analyzeBatch(query.sql);
    this.declinedSql = query.sql;
    this.declinedAnalyses = analyses;
    if (analyses instanceof PgError || analyses.length !== 1) return null;
    const analysis = analyses[0]!;
    if (!laneShaped(analysis)) return null;
    // A search_path that may shadow public (or a temporary table) makes the general path ask the catalog.
    if (namesToResolve(session, analysis).length > 0) return null;
    const route = router.route(analysis, undefined, session.searchPath());
    // `onPrimary` is only ever set for a string of several statements; checked all the same.
    if (route.kind !== "region" || !route.readOnly || route.onPrimary === true) return null;
    // A region with replicas may send the read to one, with its lag and read-your-writes rules.
    if (session.runtime.replicas?.pools.regionHasReplicas(route.region) === true) return null;
    return route;
  }

  takeAnalyses(sql: string): readonly Analysis[] | PgError | undefined {
    const analyses = this.declinedSql === sql ? this.declinedAnalyses : undefined;
    this.declinedSql = null;
    this.declinedAnalyses = undefined;
    return analyses;
  }

  /**
   * Outside a block, nothing held, nothing in flight, no state the general path would act on: a
   * pinned or batch connection, LISTEN, held SQL statements, a session of its own (session
   * pooling), replicated tables read at their writer, moves and guards of a directory store.
   */
  private sessionAtRest(): boolean {
    const session = this.session;
    return (
      session.phase === "ready" &&
      session.replication === null &&
      session.txn === null &&
      session.status() === "I" &&
      !session.ownConnection &&
      session.legs.size === 0 &&
      !session.pins.pinned &&
      session.sqlStatements.size === 0 &&
      session.relay.pending === 0 &&
      !session.extended.inBatch &&
      session.writerReads.size === 0 &&
      session.runtime.moves === undefined &&
      // The general path logs each statement at debug: so the lane is off while that is on.
      !session.log.isLevelEnabled("debug")
    );
  }

  /** Every message the backend sends while the statement runs (a view, valid during the call). */
  onFrame(frame: Frame): void {
    switch (frame.code) {
      case BackendCode.ErrorResponse: {
        const relay = this.session.relay;
        relay.errorsSent++;
        relay.onErrorSent?.(sqlStateOf(frame.payload));
        if (endsSession(frame.payload)) this.fatalRelayed = true;
        break;
      }
      case BackendCode.ParameterStatus: {
        const message = decodeParameterStatus(frame.payload);
        if (isProtocolFault(message)) return;
        this.session.relay.told.set(message.name, message.value);
        break;
      }
      case BackendCode.CopyInResponse:
        this.lease?.connection.write(COPY_FAIL);
        return;
      case BackendCode.ReadyForQuery:
        this.send(frame.bytes);
        this.flush();
        this.finish(frame.payload[0] ?? IDLE);
        return;
    }
    this.send(frame.bytes);
  }

  /** The statement's answer is complete: the connection goes back as `afterReady` would give it back. */
  private finish(status: number): void {
    const lease = this.lease;
    if (lease === null) return;
    this.lease = null;
    const session = this.session;
    if (status !== IDLE) {
      // A lane statement never leaves a block open; should one, the general bookkeeping takes it.
      const leg = session.legs.open(this.region, lease);
      leg.retire = this.retire;
      session.afterReady(leg, String.fromCharCode(status));
    } else if (this.retire || !lease.connection.isQuiescent) {
      lease.discard("cancelled");
    } else {
      lease.release();
    }
    session.client.laneFinished(FrontendCode.Query);
  }

  /** The connection broke mid-statement: the client hears what the general path would tell it. */
  onBroken(error: PgError): void {
    const lease = this.lease;
    if (lease === null) return;
    this.lease = null;
    const session = this.session;
    session.log.warn({ region: this.region, err: error.message }, "backend connection lost");
    this.flush();
    lease.discard("broken");
    if (this.fatalRelayed) {
      // The server's FATAL was this statement's answer: the client's connection ends as the server's did.
      session.close();
      return;
    }
    const lost = backendLost(this.region, error);
    const relay = session.relay;
    relay.errorsSent++;
    relay.onErrorSent?.(lost.code);
    session.writer.write(
      Buffer.concat([encodeErrorResponse(lost), encodeReadyForQuery({ status: session.status() })]),
    );
    session.client.laneFinished(FrontendCode.Query);
  }

  /** A CancelRequest with the session's key: the statement's backend is cancelled. */
  cancel(): void {
    const lease = this.lease;
    if (lease === null) return;
    this.retire = true;
    const log = this.session.log;
    log.info({ region: this.region }, "cancelling the backend statement");
    lease.connection.cancel().catch((error: unknown) => log.warn({ err: error }, "cancel failed"));
  }

  /** The session ends: a statement still running is cancelled and its connection closed. */
  abandon(): void {
    const lease = this.lease;
    if (lease === null) return;
    this.lease = null;
    this.pending = null;
    const connection = lease.connection;
    if (connection.broken) {
      lease.discard("broken");
      return;
    }
    if (!connection.isQuiescent) {
      // It would hold its locks until it ends; and a connection still owing an answer is never reused.
      const log = this.session.log;
      connection.cancel().catch((error: unknown) => log.debug({ err: error }, "cancel failed"));
      lease.discard("cancelled");
      return;
    }
    lease.release({ reset: true });
  }

  /**
   * Frames arrive as views into the backend's read buffer, usually back to back: adjacent ones
   * are joined and written once, at ReadyForQuery or at the end of the tick (the views stay valid
   * until then: the backend's framer never rewrites bytes it handed out).
   */
  private send(bytes: Buffer): void {
    const pending = this.pending;
    if (
      pending !== null &&
      bytes.buffer === pending.buffer &&
      bytes.byteOffset === pending.byteOffset + this.pendingLength
    ) {
      this.pendingLength += bytes.length;
      return;
    }
    this.flush();
    this.pending = bytes;
    this.pendingLength = bytes.length;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(flushLane, this);
    }
  }

  /** Writes what was read so far; pauses the backend while the client's socket is full. */
  flush(): void {
    const first = this.pending;
    if (first === null) return;
    this.pending = null;
    const bytes =
      this.pendingLength === first.length
        ? first
        : Buffer.from(first.buffer, first.byteOffset, this.pendingLength);
    const writer = this.session.writer;
    const lease = this.lease;
    if (writer.write(bytes) || this.paused || lease === null) return;
    // The client reads slower than the backend sends: stop reading the backend until it catches up.
    this.paused = true;
    lease.connection.pause();
    writer.onDrain(() => {
      this.paused = false;
      // Only while it is still this statement's: once given back, the pool resumed it already.
      if (this.lease === lease) lease.connection.resume();
    });
  }

  /** @internal The flush scheduled at the end of the tick. */
  scheduledFlush(): void {
    this.flushScheduled = false;
    this.flush();
  }
}

function flushLane(lane: FastLane): void {
  lane.scheduledFlush();
}

/**
 * A plain read the general path would send as it is: a read a move's hold lets through
 * (`readsOnly`: a SELECT a replica could run, locking nothing, calling no function that might
 * write) that changes nothing in the
 * session and calls nothing the path refuses or handles itself (user functions, currval/lastval,
 * volatile functions are left to it altogether), with no hint asking for the primary, no
 * parameter, no lock, no EXPLAIN, no console command and nothing the analyser could not read.
 *
 * Judged at each statement, not remembered per analysis: these are property reads of the
 * analysis, and a point read with a new literal is a new analysis object each time, whose entry in
 * a WeakMap cost more than the reads (measured: 1.6% of the proxy's busy time at 16 clients).
 */
function laneShaped(analysis: Analysis): boolean {
  const flags = analysis.flags;
  return (
    readsOnly(analysis) &&
    analysis.transaction === undefined &&
    analysis.sessionEffects.length === 0 &&
    analysis.console === undefined &&
    analysis.explain === undefined &&
    analysis.unparsed !== true &&
    analysis.insert === undefined &&
    analysis.maintenance === undefined &&
    analysis.paramCount === 0 &&
    !analysis.hints.primary &&
    !flags.selectInto &&
    !flags.writingCte
  );
}
