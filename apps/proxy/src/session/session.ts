import type { Socket } from "node:net";
import type { Lease } from "@geo/pool";
import {
  BackendCode,
  type CancelRequest,
  decodeErrorResponse,
  encodeBind,
  encodeErrorResponse,
  encodeExecute,
  encodeParse,
  encodeQuery,
  encodeReadyForQuery,
  type Frame,
  FrontendCode,
  isProtocolFault,
  Messages,
  PgError,
  type StartupMessage,
  type TransactionStatus,
} from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { beginDistributedBatch } from "../distributed/distributed-batch.js";
import { noteWriterWrite, readYourWrites } from "../distributed/read-your-writes.js";
import { LegSet, type RegionRole } from "../engine/leg-set.js";
import type { ClientPipe, SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { TransactionBlock } from "../engine/transaction-block.js";
import {
  backendLost,
  clientGone,
  inFailedTransaction,
  internalError,
  pinnedConnectionLost,
  unexpectedMessage,
} from "../errors/catalog.js";
import type { ClientWriter } from "../executor/client-writer.js";
import type { Leg } from "../executor/leg.js";
import { runMultiRegion } from "../executor/multi-region.js";
import { Relay, type Unit } from "../executor/relay.js";
import type { Logger } from "../log.js";
import type { ObservedClient } from "../observability/observed-client.js";
import { acquireRead, mayReadOnReplica, noteWrite } from "../replicas/replica-read.js";
import { SessionReplicas } from "../replicas/session-replicas.js";
import type { Route } from "../routing/router.js";
import type { ProxyRuntime } from "../server/runtime.js";
import { ClientConnection, type ClientHandler, type SessionPhase } from "../wire/client-connection.js";
import { ExtendedQuery } from "./extended-query.js";
import { runFunctionCall } from "./function-call.js";
import { HeldSqlStatements } from "./held-sql-statements.js";
import { logIn } from "./login.js";
import { SessionPins } from "./session-pins.js";
import { SessionSettings } from "./session-settings.js";
import { runSimpleQuery } from "./simple-query.js";
import { StringBlockSettings } from "./string-block-settings.js";
import type { Transaction } from "./transaction.js";

export type { StatementMode } from "../engine/statement-mode.js";
export { SESSION_PHASES, type SessionPhase } from "../wire/client-connection.js";

let nextSessionId = 1;

/**
 * One client's session: what it has set and pinned, which of its connections a statement runs on,
 * and what a statement changed. Its socket is the ClientConnection's (wire/), its connections the
 * LegSet's and its block the TransactionBlock's (engine/); the protocols (simple-query.ts,
 * extended-query.ts), login, transaction control and the executors are files of their own that
 * take the SessionPort. Longer than most files here because the choices that read all of the
 * session's state (legFor, runRouted, recordEffects, the ends of a connection) belong together.
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
      (broken, error) => this.onLegBroken(broken, error),
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
    const schemas = this.settings.searchPath();
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

  // ------------------------------------------------------------------------------------------
  // Input
  // ------------------------------------------------------------------------------------------

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
        // A COPY's data queued behind other messages goes to its backend in order; outside a
        // COPY FROM these are ignored, as PostgreSQL does.
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
    const matched = this.runtime.cancels.cancel(request.processId, Buffer.from(request.secretKey));
    this.log.info({ matched }, "cancel request");
  }

  // ------------------------------------------------------------------------------------------
  // Startup
  // ------------------------------------------------------------------------------------------

  startup(message: StartupMessage): void {
    logIn(this, message);
  }

  // ------------------------------------------------------------------------------------------
  // Legs
  // ------------------------------------------------------------------------------------------

  /**
   * The connection a statement for `region` runs on: the transaction's leg there (opened now if
   * new, with the client's settings and BEGIN replayed), the pinned connection, the batch's leg, or
   * a fresh one from the pool with the client's settings replayed. `anywhere`: the statement reads
   * no table, so any connection already held will do. `readsReplica`: it may run on a replica of
   * the region (`replicas/replica-read.ts`).
   */
  async legFor(
    region: string,
    anywhere: boolean,
    mode: StatementMode,
    readsReplica = false,
  ): Promise<Leg | PgError> {
    let txn = this.txn;
    if (txn?.ending === true && !txn.legs.has(region)) {
      // The block's COMMIT or ROLLBACK is on its way (pipeline): another region must not be
      // opened inside a block that is over. Its answer comes first (nothing is skipped here:
      // after an error this batch's messages would not reach this far).
      await this.settle();
      txn = this.txn;
    }
    if (anywhere) {
      // Inside a block only the block's own legs will do: a pinned or batch connection outside
      // it would run the statement in autocommit, and its failure would not fail the block.
      if (txn !== null) {
        const primary = txn.primaryLeg();
        if (primary !== undefined) return this.activate(primary);
        if (this.pinnedLeg !== null) region = this.pinnedLeg.region;
      } else {
        const held = this.pinnedLeg ?? this.batchLegs.values()[0];
        if (held !== undefined) return this.activate(held);
      }
    }
    if (txn !== null) {
      const existing = txn.legs.get(region);
      if (existing !== undefined) return this.activate(existing);
    } else {
      if (this.pinnedLeg !== null && this.pinnedLeg.region === region) return this.activate(this.pinnedLeg);
      const batchLeg = this.batchLegs.get(region);
      if (batchLeg !== undefined) return this.activate(batchLeg);
      const replicaLeg = readsReplica ? this.legs.replicaBatch.get(region) : undefined;
      if (replicaLeg !== undefined) return this.activate(replicaLeg);
    }
    if (this.relay.pending > 0) await this.quiesceActive();
    let leg: Leg;
    if (this.pinnedLeg !== null && this.pinnedLeg.region === region) leg = this.pinnedLeg;
    else {
      let lease: Lease;
      let replica: string | undefined;
      try {
        if (readsReplica) ({ lease, replica } = await acquireRead(this, region));
        else
          lease =
            this.runtime.pools.tryAcquire(region, this.user, this.database) ??
            (await this.runtime.pools.acquire(region, this.user, this.database));
      } catch (error) {
        return error instanceof PgError ? error : internalError(error);
      }
      if (this.phase === "closed") {
        // The client left while waiting for the connection: nobody would ever give it back.
        lease.release();
        return clientGone();
      }
      leg = this.legs.open(region, lease, replica);
      const replayed = this.replaySettings(leg);
      if (replayed !== null) {
        const failed = await replayed;
        if (failed !== null || leg.broken !== null) {
          // The connection holds part of the settings, or none: closed, never reused.
          leg.retire = true;
          this.legs.discard(leg, true);
          return failed ?? leg.broken ?? internalError("the connection broke while settings were replayed");
        }
      }
    }
    if (txn !== null) {
      txn.legs.add(leg);
      this.relay.expect({ leg, kind: "query", mode: "quiet", dropReadyForQuery: true });
      leg.write(encodeQuery({ sql: txn.openingSql() }));
    } else if (mode.extended) this.holdForBatch(leg);
    this.legs.active = leg;
    if (mode.extended) this.extended.touch(leg);
    return leg;
  }

  /**
   * Makes the connection's settings the client's, before BEGIN so a rollback keeps them.
   * Resolves with null once they are (at once when nothing differs), or with the error the
   * server gave: the client's statement must then not run there, since it would run with other
   * settings than the client's (another role, say).
   */
  replaySettings(leg: Leg): Promise<PgError | null> | null {
    const applied = leg.connection.appliedSettings;
    const replay = this.settings.replayFor(applied);
    if (replay === null) return null;
    this.settings.markApplied(applied);
    return new Promise((resolve) => {
      let failure: PgError | null = null;
      this.relay.expect({
        leg,
        kind: "query",
        mode: "silent",
        dropReadyForQuery: true,
        inspect: (frame) => {
          if (frame.code !== BackendCode.ErrorResponse || failure !== null) return;
          const decoded = decodeErrorResponse(frame.payload);
          failure = isProtocolFault(decoded)
            ? internalError(decoded.message)
            : PgError.fromFields(decoded.fields);
        },
        done: (unit) => {
          if (unit.failed) applied.clear();
          resolve(
            unit.failed
              ? (failure ?? leg.connection.brokenError ?? internalError("a setting could not be replayed"))
              : null,
          );
        },
        skipped: () =>
          resolve(leg.connection.brokenError ?? internalError("a setting could not be replayed")),
      });
      leg.write(encodeQuery({ sql: replay }));
      // Flushed by the Query's own ReadyForQuery; the statement waits for it.
    });
  }

  /** Gives a leg's backend messages back to the relay after the proxy read an answer itself. */
  reattach(leg: Leg): void {
    leg.connection.setReceiver({ onFrame: (frame) => this.relay.onFrame(leg, frame) });
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

  private onLegBroken(leg: Leg, error: PgError): void {
    this.log.warn({ region: leg.region, err: error.message }, "backend connection lost");
    const roles = this.legs.lost(leg);
    const wasPinned = roles.has("pinned");
    if (wasPinned && this.ownConnection) {
      // The client's own server session ended: so does the client's, as PostgreSQL ends it. A
      // server that said why (FATAL, as pg_terminate_backend makes it) is heard as it spoke: its
      // error went to the client with the statement it ended, or, while idle, is sent now; then
      // the socket closes with nothing more, as a server's does.
      const serverFatal = error.cause instanceof PgError && error.cause.isFatal ? error.cause : null;
      const relayed = serverFatal !== null && leg.outstanding > 0;
      leg.release(true);
      if (relayed) this.close();
      else this.fatal(serverFatal ?? pinnedConnectionLost(leg.region));
      return;
    }
    if (wasPinned) {
      this.pins.record({
        sessionEffects: [{ kind: "discard", local: false, value: "all" }],
      } as unknown as Analysis);
    }
    if (roles.has("block")) this.block.fail();
    this.client.lost(leg);
    this.relay.failLeg(leg, wasPinned ? pinnedConnectionLost(leg.region) : backendLost(leg.region, error));
    leg.release(true);
  }

  // ------------------------------------------------------------------------------------------
  // Statements
  // ------------------------------------------------------------------------------------------

  /**
   * Runs one statement whose route is known. `send` writes the statement to the leg and queues
   * its units (a simple Query, or the extended messages); it returns the unit whose completion
   * ends the statement. Resolves with the leg used, or null when the statement was answered or
   * refused without one.
   */
  async runRouted(
    analysis: Analysis,
    route: Route,
    mode: StatementMode,
    send: (leg: Leg) => void,
  ): Promise<Leg | null> {
    const txn = this.txn;
    if (route.kind === "error") {
      this.fail(route.error, mode);
      return null;
    }
    if (route.kind === "multi-region") {
      await runMultiRegion(this, analysis, route.plan, mode);
      if (route.plan.kind === "distributed-write")
        for (const written of route.plan.regions)
          noteWrite(this, written, this.txn?.legs.get(written) ?? null);
      return null;
    }
    if (route.kind !== "region" && route.kind !== "deferred") {
      throw new Error(`runRouted called for a ${route.kind} route`);
    }
    const readOnly = route.kind === "region" ? route.readOnly : true;
    // A string of several statements (onPrimary) was placed with every statement's own region.
    const region =
      route.kind === "region"
        ? route.onPrimary === true
          ? route.region
          : readYourWrites(this, analysis, route.region, readOnly)
        : this.runtime.router.topology.home.id;
    const anywhere = route.kind === "region" && route.anywhere;
    const batchWrite = this.extended.batchWriteRegion;
    if (txn === null && mode.extended && batchWrite !== null && batchWrite !== region && !readOnly) {
      // A batch outside a block that writes a second region becomes one distributed transaction.
      await beginDistributedBatch(this);
    }
    const readsReplica = mayReadOnReplica(this, analysis, route, region);
    const leg = await this.legFor(region, anywhere, mode, readsReplica);
    if (leg instanceof PgError) {
      this.fail(leg, mode);
      return null;
    }
    if (!readOnly || !analysis.readOnly) noteWrite(this, leg.region, leg);
    if (!readOnly) {
      const block = this.txn;
      if (block !== null) {
        block.writeRegion ??= leg.region;
        block.writeRegions.add(leg.region);
      } else if (mode.extended) this.extended.batchWriteRegion = leg.region;
      noteWriterWrite(this, analysis, leg.region);
    }
    if (this.log.isLevelEnabled("debug"))
      this.log.debug({ region: leg.region, sql: analysis.text, kind: analysis.kind }, "statement");
    this.runtime.moves?.beforeSend(this, leg, readOnly, mode);
    send(leg);
    return leg;
  }

  /**
   * One region only: a Query the proxy could not parse goes to the server as it is. If the
   * server runs it, it may have changed anything in the session, so the client keeps that
   * connection from then on (until DISCARD ALL), exactly as it would on one server.
   */
  async forwardUnread(bytes: Buffer): Promise<void> {
    const region = this.runtime.router.topology.home.id;
    if (this.relay.pending > 0) await this.settle();
    const leg = await this.legFor(region, false, { extended: false, final: true });
    if (leg instanceof PgError) {
      this.fail(leg, { extended: false, final: true });
      return;
    }
    this.relay.expect({
      leg,
      kind: "query",
      mode: "relay",
      done: (unit, status) => {
        if (!unit.failed) {
          this.pins.holdUnknown();
          if (this.pinnedLeg === null) {
            this.legs.pin(leg);
            leg.connection.markDirty("full");
            this.log.info(
              { region: leg.region },
              "session pinned to its connection (a statement the proxy could not read)",
            );
          }
        }
        this.afterReady(leg, status);
      },
    });
    leg.write(bytes);
    await this.relay.idle();
  }

  /** Records what a statement that succeeded changed in the session (settings, pins). */
  recordEffects(leg: Leg | null, analyses: readonly Analysis[]): void {
    // A string sent whole may hold its own BEGIN ... ROLLBACK or ROLLBACK TO: follow them.
    const block = analyses.length > 1 ? new StringBlockSettings(this.settings, this.txn) : null;
    for (const analysis of analyses) {
      if (block !== null && analysis.transaction !== undefined) block.control(analysis.transaction);
      if (analysis.sessionEffects.length === 0) continue;
      this.settings.record(analysis);
      if (
        analysis.sessionEffects.some(
          (effect) =>
            (effect.kind === "deallocate" && effect.name === undefined) ||
            (effect.kind === "discard" && effect.value === "all"),
        )
      ) {
        this.extended.forgetStatements();
        this.sqlStatements.clear();
      }
      if (leg !== null) this.recordReportedValues(leg, analysis);
      // Mid-batch outside a block the batch may still fail and roll back: removals wait for Sync.
      const batchOpen = this.txn === null && this.extended.inBatch;
      if (batchOpen) this.batchPins.push(analysis);
      this.pins.record(analysis, this.txn !== null || batchOpen);
      if (leg === null) continue;
      const changesSettings = analysis.sessionEffects.some(
        (effect) =>
          !effect.local &&
          (effect.kind === "set" ||
            effect.kind === "reset" ||
            effect.kind === "set-config" ||
            effect.kind === "discard"),
      );
      if (changesSettings) {
        if (this.txn !== null) this.txn.settingsLegs.add(leg);
        else this.settings.markApplied(leg.connection.appliedSettings);
      }
      if (
        analysis.sessionEffects.some(
          (effect) =>
            effect.kind === "set-config" &&
            !effect.local &&
            (effect.name === undefined || effect.value === undefined),
        )
      ) {
        // set_config of a value (or name) the proxy cannot know, computed or a parameter: the
        // setting lives on this connection only. The session keeps the connection, as after a
        // statement it could not read, and the connection is reset before anyone else uses it.
        this.pins.holdUnknown();
        leg.connection.markDirty("full");
        if (this.pinnedLeg === null) {
          this.legs.pin(leg);
          this.log.info(
            { region: leg.region },
            "session pinned to its connection (a setting the proxy cannot replay)",
          );
        }
      }
      if (SessionPins.pins(analysis) && this.pins.pinned && this.pinnedLeg === null) {
        this.legs.pin(leg);
        leg.connection.markDirty("full");
        this.log.info({ region: leg.region }, "session pinned to its connection");
      }
    }
    this.unpinIfFree();
  }

  /**
   * `SET DateStyle TO ymd` changes only part of the setting: replayed alone on a connection whose
   * DateStyle differs it would give another value. The value the server reported instead is
   * what the session has, so that is what is kept.
   */
  private recordReportedValues(leg: Leg, analysis: Analysis): void {
    for (const effect of analysis.sessionEffects) {
      if (effect.kind !== "set" || effect.local || effect.name?.toLowerCase() !== "datestyle") continue;
      const reported = leg.connection.parameters.get("DateStyle");
      if (reported !== undefined) this.settings.setValue("DateStyle", reported);
    }
  }

  /** At Sync: a batch that succeeded outside a block committed its UNLISTEN, CLOSE... */
  settleBatchPins(batchFailed: boolean): void {
    const held = this.batchPins.splice(0);
    if (batchFailed || this.txn !== null) return;
    for (const analysis of held) this.pins.record(analysis, false);
    this.unpinIfFree();
  }

  /**
   * Gives the pinned connection back once nothing pins the client to it. Never inside a block,
   * nor mid-batch (the batch's implicit transaction is still open there): Sync calls it again.
   */
  unpinIfFree(): void {
    const leg = this.pinnedLeg;
    if (leg === null || this.ownConnection || this.pins.pinned || this.txn !== null || this.extended.inBatch)
      return;
    this.legs.unpin();
    this.log.info({ region: leg.region }, "session unpinned from its connection");
    this.releaseLeg(leg);
  }

  /**
   * After a statement's ReadyForQuery outside a transaction block: a leg left in a transaction
   * (the statement began one) becomes the session's transaction; an idle one goes back to the pool.
   */
  afterReady(leg: Leg, status: string | null): void {
    if (this.txn === null) {
      if (status === "T" || status === "E") {
        this.block.begin("BEGIN", false, this.settings.snapshot()).legs.add(leg);
        return;
      }
      this.releaseLeg(leg);
      return;
    }
    if (status === "I" && this.txn.legs.size === 1 && this.txn.legs.get(leg.region) === leg) {
      // The transaction ended inside a string sent as one (BEGIN ... COMMIT to one region).
      this.block.end();
      this.releaseLeg(leg);
    }
  }

  /** Sends a proxy error in its place; inside a transaction block the block fails, as in PostgreSQL. */
  fail(error: PgError, mode: StatementMode): void {
    this.block.fail();
    if (mode.extended) {
      this.extended.abortBatch();
      this.relay.error(error, true);
      return;
    }
    this.relay.error(error, false);
    if (mode.final) this.relay.local({ bytes: () => this.readyForQuery() });
  }

  /** Statements in a failed block, except those that end it, get 25P02. */
  refuseInFailedBlock(analysis: Analysis, mode: StatementMode): boolean {
    // A block whose ROLLBACK (or COMMIT) is already on its way is over on the server.
    // An empty statement is no command: PostgreSQL parses it even in a failed block.
    if (this.status() !== "E" || this.txn?.ending === true || analysis.kind === "empty") return false;
    const action = analysis.transaction?.action;
    if (action === "rollback" || action === "rollback-to" || action === "commit" || action === "prepare") {
      return false;
    }
    this.fail(inFailedTransaction(), mode);
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Statements the proxy handles itself
  // ------------------------------------------------------------------------------------------

  /**
   * Runs SQL of the proxy's own on a leg once the previous leg's answers are complete (answers of
   * two legs are never in flight at once, so they cannot interleave).
   */
  async runOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): Promise<void> {
    await this.activate(leg);
    this.writeOnLeg(leg, sql, mode, extended, done);
  }

  /** Writes SQL of the proxy's own to the active leg, as a simple Query or, mid-batch, as Parse/Bind/Execute. */
  writeOnLeg(
    leg: Leg,
    sql: string,
    mode: "relay" | "quiet" | "silent",
    extended: boolean,
    done?: Unit["done"],
  ): void {
    if (extended) {
      this.extended.touch(leg);
      this.relay.expect({ leg, kind: "parse", mode: "quiet" });
      this.relay.expect({ leg, kind: "bind", mode: "silent" });
      this.relay.expect({ leg, kind: "execute", mode, ...(done === undefined ? {} : { done }) });
      leg.write([
        encodeParse({ name: "", sql, paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
      ]);
      return;
    }
    this.relay.expect({
      leg,
      kind: "query",
      mode,
      dropReadyForQuery: true,
      ...(done === undefined ? {} : { done }),
    });
    leg.write(encodeQuery({ sql }));
  }

  // ------------------------------------------------------------------------------------------
  // Cancel and close
  // ------------------------------------------------------------------------------------------

  /** A CancelRequest with this session's key: cancel what its connections run now, then retire them. */
  cancel(): void {
    const gid = this.committingGid;
    if (gid !== null) {
      if (this.runtime.txn.isDecided(gid)) {
        // All a cancel could still do is interrupt COMMIT PREPARED: the commit is decided.
        this.log.info({ gid }, "cancel ignored: the distributed commit is decided");
        return;
      }
      // Before the decision a cancel may stop a slow PREPARE; the coordinator then rolls back everywhere.
      for (const leg of this.txn?.legs.values() ?? []) {
        leg.retire = true;
        leg.connection.cancel().catch((error: unknown) => this.log.warn({ err: error }, "cancel failed"));
      }
      return;
    }
    for (const hook of this.cancelHooks) hook();
    for (const leg of this.legs.all()) {
      if (!leg.busy) continue;
      leg.retire = true;
      this.log.info({ region: leg.region }, "cancelling the backend statement");
      leg.connection.cancel().catch((error: unknown) => this.log.warn({ err: error }, "cancel failed"));
    }
  }

  /** Sends a FATAL error and closes this client only. */
  fatal(error: PgError): void {
    if (this.phase === "closed") return;
    this.relay.flush();
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
    if (this.cancelKey !== null) this.runtime.cancels.unregister(this.cancelKey.processId);
    // A read across regions still running has nobody to answer: its regions' statements stop
    // now (their connections are cancelled, so never pooled again) instead of running to the end.
    for (const hook of this.cancelHooks) hook();
    this.block.end();
    const own = this.ownConnection && !this.runtime.config.pool.sessionReuse ? this.legs.pinned : null;
    for (const leg of this.legs.drain()) {
      if (leg.broken === null && !leg.connection.isQuiescent) {
        // The client left mid-statement: stop the statement on the server (it would hold its
        // locks until it ends), and close the connection rather than reuse it.
        leg.retire = true;
        leg.connection.cancel().catch((error: unknown) => this.log.debug({ err: error }, "cancel failed"));
      }
      if (leg === own) {
        // Session pooling: the client's server session ends with its own, as with one server
        // (a later client must not find plpgsql loaded, a temporary namespace, or its statistics).
        leg.close("the client's session ended");
        continue;
      }
      // An open transaction or pinned objects need a full reset.
      leg.release(true);
    }
  }
}
