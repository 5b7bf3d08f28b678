import type { Socket } from "node:net";
import {
  type CancelRequest,
  encodeErrorResponse,
  encodeReadyForQuery,
  type Frame,
  FrontendCode,
  Messages,
  type PgError,
  type StartupMessage,
  type TransactionStatus,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { LegSet, type RegionRole } from "../engine/leg-set.js";
import type { ClientPipe, SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { TransactionBlock } from "../engine/transaction-block.js";
import { unexpectedMessage } from "../errors/catalog.js";
import type { ClientWriter } from "../executor/client-writer.js";
import type { Leg } from "../executor/leg.js";
import { Relay, type Unit } from "../executor/relay.js";
import type { Logger } from "../log.js";
import type { ObservedClient } from "../observability/observed-client.js";
import { SessionReplicas } from "../replicas/session-replicas.js";
import type { Route } from "../routing/router.js";
import type { ProxyRuntime } from "../server/runtime.js";
import { ClientConnection, type ClientHandler, type SessionPhase } from "../wire/client-connection.js";
import { ExtendedQuery } from "./extended-query.js";
import { FastLane } from "./fast-lane.js";
import { runFunctionCall } from "./function-call.js";
import { HeldSqlStatements } from "./held-sql-statements.js";
import { chooseLeg } from "./leg-choice.js";
import { logIn } from "./login.js";
import { runOnLeg, writeOnLeg } from "./proxy-sql.js";
import { forwardUnread, runRouted } from "./routed-statement.js";
import { recordEffects, settleBatchPins } from "./session-effects.js";
import { cancelSession, onLegLost, releaseSessionLegs } from "./session-end.js";
import { SessionPins } from "./session-pins.js";
import { SessionSettings } from "./session-settings.js";
import { replaySettings } from "./settings-replay.js";
import { runSimpleQuery } from "./simple-query.js";
import { afterReady, failStatement, refuseInFailedBlock } from "./statement-outcome.js";
import type { Transaction } from "./transaction.js";

export type { StatementMode } from "../engine/statement-mode.js";
export { SESSION_PHASES, type SessionPhase } from "../wire/client-connection.js";

let nextSessionId = 1;

/**
 * One client's session: what it has set and pinned, and the handles every part of a statement's
 * path takes (the SessionPort). Its socket is the ClientConnection's (wire/), its connections the
 * LegSet's and its block the TransactionBlock's (engine/). This file holds the session's state,
 * its input dispatch and its lifecycle (connected, logged in, closed); what a statement does is in
 * files of its own that take the SessionPort: the protocols (simple-query.ts, extended-query.ts),
 * the choice of a connection (leg-choice.ts, settings-replay.ts), a routed statement
 * (routed-statement.ts), its end (statement-outcome.ts), what it changed (session-effects.ts),
 * the proxy's own SQL (proxy-sql.ts), and the ends of the session (session-end.ts).
 */
export class Session implements ClientHandler, SessionPort {
  readonly id = nextSessionId++;
  readonly log: Logger;
  /** The client's socket: its messages in, its answers out. */
  readonly client: ClientConnection;
  readonly writer: ClientWriter;
  readonly relay: Relay;
  readonly extended: ExtendedQuery;
  /** This connection as the metrics and SHOW CLIENTS see it. */
  readonly observed: ObservedClient;
  readonly fastLane: FastLane = new FastLane(this);
  user = "";
  database = "";
  settings = new SessionSettings();
  readonly pins = new SessionPins();
  /** Every backend connection this session holds, and why (engine/leg-set.ts). */
  readonly legs: LegSet;
  /** The session's transaction block and its state (engine/transaction-block.ts). */
  readonly block: TransactionBlock;
  /** Replicated tables this session wrote at their writer: read from there from now on (read-your-writes). */
  readonly writerReads = new Set<string>();
  readonly sqlStatements = new HeldSqlStatements();
  /** Read-your-writes over replicas, and the replica connections of the batch in flight. */
  readonly replicas = new SessionReplicas();
  /** Statements of the current extended batch whose pin removals wait for its Sync. */
  private readonly batchPins: Analysis[] = [];
  /** Work outside the legs that a CancelRequest must stop too (the regions of a scatter read). */
  readonly cancelHooks = new Set<() => void>();
  /** The key a CancelRequest for this session carries, once logged in. */
  cancelKey: { processId: number; secretKey: Buffer } | null = null;
  /** Session pooling: the client keeps its connection whatever it does (login.ts). */
  ownConnection = false;
  /** A replication connection, relayed to its own backend (replication-pipe.ts). */
  replication: ClientPipe | null = null;
  private readonly closedPromise: Promise<void>;
  private resolveClosed!: () => void;

  constructor(
    readonly socket: Socket,
    readonly runtime: ProxyRuntime,
  ) {
    this.log = runtime.log.child({
      session: this.id,
      client: `${socket.remoteAddress}:${socket.remotePort}`,
    });
    this.client = new ClientConnection(socket, this, this.log, runtime.config.server.maxMessageBytes);
    this.writer = this.client.writer;
    this.legs = new LegSet(
      (from, frame) => this.relay.onFrame(from, frame),
      (broken, error) => onLegLost(this, broken, error),
    );
    this.block = new TransactionBlock(this.legs);
    this.relay = new Relay(
      this.writer,
      () => this.extended.onError(),
      (leg, code) =>
        this.log.warn({ region: leg.region, code: String.fromCharCode(code) }, "unexpected backend message"),
      () => this.status(),
    );
    this.extended = new ExtendedQuery(this);
    this.relay.onCopyIn = (leg) => this.client.copyInto(leg);
    this.closedPromise = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.on("error", (error) => this.log.debug({ err: error.message }, "client socket error"));
    socket.on("close", () => this.onClose());
    this.log.info("client connected");
    this.observed = runtime.observability.track(this);
  }

  get closed(): Promise<void> {
    return this.closedPromise;
  }

  get phase(): SessionPhase {
    return this.client.phase;
  }

  /** The open transaction block, or null. */
  get txn(): Transaction | null {
    return this.block.current;
  }

  /** The connection the session's state lives on, or null. */
  get pinnedLeg(): Leg | null {
    return this.legs.pinned;
  }

  /** The connections of the extended-protocol batch in flight outside a block. */
  get batchLegs(): RegionRole {
    return this.legs.batch;
  }

  /** The two-phase commit under way: once its decision is durable, cancels stop at the proxy. */
  get committingGid(): string | null {
    return this.block.committingGid;
  }

  /** The schemas of the search_path the client set (with `$user` as its role), or undefined. */
  searchPath(): readonly string[] | undefined {
    // A SET LOCAL of the open block holds until the block ends (or rolls back to before it).
    const schemas = this.txn?.localSearchPath() ?? this.settings.searchPath();
    if (schemas === undefined || !schemas.includes("$user")) return schemas;
    return schemas.map((schema) => (schema === "$user" ? this.user : schema));
  }

  /** The transaction status the client is told in ReadyForQuery. */
  status(): TransactionStatus {
    return this.block.status;
  }

  /** True when nothing is in flight and no transaction is open: the session can be closed cleanly. */
  get idle(): boolean {
    return this.txn === null && this.relay.pending === 0 && !this.client.busy;
  }

  readyForQuery(): Buffer {
    return encodeReadyForQuery({ status: this.status() });
  }

  // ---- Input ----

  /** One message of the client's after login (ClientConnection hands them over in order). */
  async handle(frame: Frame): Promise<void> {
    if (this.replication !== null) return this.replication.fromClient(frame);
    switch (frame.code) {
      case FrontendCode.Query:
        await runSimpleQuery(this, frame);
        return;
      case FrontendCode.Parse:
      case FrontendCode.Bind:
      case FrontendCode.Describe:
      case FrontendCode.Execute:
      case FrontendCode.Close:
      case FrontendCode.Sync:
      case FrontendCode.Flush:
        await this.extended.handle(frame);
        return;
      case FrontendCode.Terminate:
        this.close();
        return;
      case FrontendCode.FunctionCall:
        await runFunctionCall(this, frame);
        return;
      case FrontendCode.CopyData:
      case FrontendCode.CopyDone:
      case FrontendCode.CopyFail:
        // Queued behind other messages: to its COPY's backend in order; else ignored, as PostgreSQL does.
        this.client.copyQueued(frame);
        return;
      default:
        this.fatal(unexpectedMessage(`message type '${String.fromCharCode(frame.code)}'`));
    }
  }

  handled(code: number): void {
    this.observed.afterMessage(code);
  }

  cancelRequest(request: CancelRequest): void {
    const outcome = this.runtime.cancels.cancel(request.processId, Buffer.from(request.secretKey));
    this.log.info({ matched: outcome === "cancelled", outcome }, "cancel request");
  }

  // ---- Startup ----

  startup(message: StartupMessage): void {
    logIn(this, message);
  }

  // ---- Legs ----

  /** The connection a statement for `region` runs on (leg-choice.ts explains the choice). */
  legFor(
    region: string,
    anywhere: boolean,
    mode: StatementMode,
    readsReplica = false,
  ): Promise<Leg | PgError> {
    return chooseLeg(this, region, anywhere, mode, readsReplica);
  }

  /** Makes the connection's settings the client's (settings-replay.ts). */
  replaySettings(leg: Leg): Promise<PgError | null> | null {
    return replaySettings(this, leg);
  }

  /** Gives a leg's backend messages back to the relay after the proxy read an answer itself. */
  reattach(leg: Leg): void {
    leg.restore();
  }

  /** Makes `leg` the one written to, after the previous one's answers are complete. */
  async activate(leg: Leg): Promise<Leg> {
    if (this.legs.active !== leg) await this.quiesceActive();
    this.legs.active = leg;
    if (this.extended.inBatch) this.extended.touch(leg);
    return leg;
  }

  get currentLeg(): Leg | null {
    return this.legs.active;
  }

  /** Keeps `leg` until the extended batch's Sync (a replica's connection in its own role). */
  holdForBatch(leg: Leg): void {
    (leg.replica === undefined ? this.legs.batch : this.legs.replicaBatch).add(leg);
  }

  /** Before another leg is written to, the answers of the one in use must be complete. */
  async quiesceActive(): Promise<void> {
    const active = this.legs.active;
    if (active !== null && active.outstanding > 0) {
      // The backend holds extended-protocol answers until Sync or Flush.
      if (active.broken === null) active.write(Messages.flush);
      await this.relay.idle();
    }
  }

  /**
   * Waits for every answer in flight. Mid-batch a backend holds the answers of Parse/Bind/Execute
   * until Sync or Flush, so the leg in use is flushed first: waiting without it never ends.
   */
  async settle(): Promise<void> {
    await this.quiesceActive();
    await this.relay.idle();
  }

  /** Gives a leg back once it is not needed: kept while pinned or in a transaction. */
  releaseLeg(leg: Leg): void {
    this.legs.release(leg);
  }

  // ---- Statements ----

  /** Runs one statement whose route is known (routed-statement.ts). */
  runRouted(
    analysis: Analysis,
    route: Route,
    mode: StatementMode,
    send: (leg: Leg) => void,
  ): Promise<Leg | null> {
    return runRouted(this, analysis, route, mode, send);
  }

  /** A Query the proxy could not parse goes to the home region as it is (routed-statement.ts). */
  forwardUnread(bytes: Buffer): Promise<void> {
    return forwardUnread(this, bytes);
  }

  /** Records what a statement that succeeded changed in the session (session-effects.ts). */
  recordEffects(leg: Leg | null, analyses: readonly Analysis[]): void {
    recordEffects(this, this.batchPins, leg, analyses);
  }

  /** At Sync: a batch that succeeded outside a block committed its UNLISTEN, CLOSE... */
  settleBatchPins(batchFailed: boolean): void {
    settleBatchPins(this, this.batchPins, batchFailed);
  }

  /** After a statement's ReadyForQuery outside a block: its leg kept or given back (statement-outcome.ts). */
  afterReady(leg: Leg, status: string | null): void {
    afterReady(this, leg, status);
  }

  /** Sends a proxy error in a statement's place (statement-outcome.ts). */
  fail(error: PgError, mode: StatementMode): void {
    failStatement(this, error, mode);
  }

  /** Statements in a failed block, except those that end it, get 25P02 (statement-outcome.ts). */
  refuseInFailedBlock(analysis: Analysis, mode: StatementMode): boolean {
    return refuseInFailedBlock(this, analysis, mode);
  }

  // ---- Statements the proxy handles itself ----

  /** Runs SQL of the proxy's own on a leg once the previous leg's answers are complete (proxy-sql.ts). */
  runOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): Promise<void> {
    return runOnLeg(this, leg, sql, mode, extended, done);
  }

  /** Writes SQL of the proxy's own to the active leg (proxy-sql.ts). */
  writeOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): void {
    writeOnLeg(this, leg, sql, mode, extended, done);
  }

  // ---- Cancel and close ----

  /** A CancelRequest with this session's key (session-end.ts). */
  cancel(): void {
    cancelSession(this);
  }

  /** Sends a FATAL error and closes this client only. */
  fatal(error: PgError): void {
    if (this.phase === "closed") return;
    this.relay.flush();
    this.fastLane.flush();
    this.runtime.observability.errorSent(error.code);
    this.writer.write(encodeErrorResponse(error));
    this.close();
  }

  close(): void {
    if (this.phase === "closed") return;
    this.client.phase = "closed";
    this.relay.flush();
    this.writer.uncork();
    this.socket.end();
    this.socket.destroySoon?.();
    this.cleanup();
  }

  private onClose(): void {
    this.client.phase = "closed";
    this.cleanup();
    this.log.info("client disconnected");
    this.resolveClosed();
  }

  private cleaned = false;

  private cleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    releaseSessionLegs(this);
  }
}
