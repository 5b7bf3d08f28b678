import type { Socket } from "node:net";
import type { Lease } from "@geo/pool";
import {
  BackendCode,
  type CancelRequest,
  copyFrame,
  decodeErrorResponse,
  decodeStartupPacket,
  encodeBind,
  encodeCommandComplete,
  encodeDataRow,
  encodeErrorResponse,
  encodeExecute,
  encodeNoticeResponse,
  encodeParse,
  encodeQuery,
  encodeReadyForQuery,
  encodeRowDescription,
  type Frame,
  FrontendCode,
  FrontendFramer,
  isProtocolFault,
  Messages,
  PgError,
  protocolViolation,
  SqlState,
  STARTUP_FRAME_CODE,
  type StartupMessage,
  type TransactionStatus,
} from "@geo/proto";
import { type Analysis, preparedStatementText } from "@geo/sql";
import { runConsoleCommand } from "../console/index.js";
import { commitAcrossRegions } from "../distributed/commit-across-regions.js";
import { beginDistributedBatch } from "../distributed/distributed-batch.js";
import { noteWriterWrite, readYourWrites } from "../distributed/read-your-writes.js";
import { refuseClientPrepareAcrossRegions } from "../distributed/txn-errors.js";
import {
  backendLost,
  clientGone,
  inFailedTransaction,
  internalError,
  pinnedConnectionLost,
  refuseFunctionCall,
  refuseSecondWriteRegion,
  refuseSqlPrepareAcrossRegions,
  shuttingDown,
  unexpectedMessage,
} from "../errors/catalog.js";
import { ClientWriter } from "../executor/client-writer.js";
import { Leg } from "../executor/leg.js";
import { runMultiRegion } from "../executor/multi-region.js";
import { Relay, type Unit } from "../executor/relay.js";
import type { Logger } from "../log.js";
import type { ObservedClient } from "../observability/observed-client.js";
import { acquireRead, mayReadOnReplica, noteWrite, replicaOf } from "../replicas/replica-read.js";
import { SessionReplicas } from "../replicas/session-replicas.js";
import type { Route } from "../routing/router.js";
import type { ProxyRuntime } from "../server/runtime.js";
import { ExtendedQuery } from "./extended-query.js";
import { SessionPins } from "./session-pins.js";
import { SessionSettings, startupSettings } from "./session-settings.js";
import { resetToStartup, sendResetToStartup } from "./settings/reset-to-startup.js";
import { runSimpleQuery } from "./simple-query.js";
import { checkStartup, loginParameters, loginReply } from "./startup.js";
import { checkStartupSettings } from "./startup-settings.js";
import { StringBlockSettings } from "./string-block-settings.js";
import { Transaction } from "./transaction.js";

export const SESSION_PHASES = ["startup", "login", "ready", "closed"] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** How a statement's answer is framed: a simple Query's own ReadyForQuery, or inside a larger exchange. */
export interface StatementMode {
  readonly extended: boolean;
  /** The statement is the whole simple Query: the backend's ReadyForQuery goes to the client. */
  readonly final: boolean;
}

const INBOX_HIGH = 256;
const INBOX_LOW = 32;

let nextSessionId = 1;

/**
 * One client connection: startup, then the client's messages processed one at a time in order,
 * each routed to a region's pooled connection or answered by the proxy itself. Answers go back
 * in order through the relay. Bad bytes close this client only; nothing here throws past the
 * socket's handlers.
 */
export class Session {
  readonly id = nextSessionId++;
  readonly log: Logger;
  readonly writer: ClientWriter;
  readonly relay: Relay;
  readonly extended: ExtendedQuery;
  /** This connection as the metrics and SHOW CLIENTS see it. */
  readonly observed: ObservedClient;
  phase: SessionPhase = "startup";
  user = "";
  database = "";
  settings = new SessionSettings();
  readonly pins = new SessionPins();
  pinnedLeg: Leg | null = null;
  txn: Transaction | null = null;
  /** The two-phase commit under way: once its decision is durable, cancels stop at the proxy. */
  committingGid: string | null = null;
  /** Replicated tables this session wrote at their writer: read from there from now on (read-your-writes). */
  readonly writerReads = new Set<string>();
  /** Read-your-writes over replicas, and the replica connections of the batch in flight. */
  readonly replicas = new SessionReplicas();
  /** Statements of the current extended batch whose pin removals wait for its Sync. */
  private readonly batchPins: Analysis[] = [];
  /** Legs used by the extended-protocol batch since the last Sync (outside a transaction). */
  readonly batchLegs = new Map<string, Leg>();
  /** Work outside the legs that a CancelRequest must stop too (the regions of a scatter read). */
  readonly cancelHooks = new Set<() => void>();
  /** The leg last written to: before another is used, its answers must be complete. */
  private activeLeg: Leg | null = null;
  private readonly framer = new FrontendFramer();
  private readonly inbox: Frame[] = [];
  private processing = false;
  private key: { processId: number; secretKey: Buffer } | null = null;
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
    this.writer = new ClientWriter(socket);
    this.relay = new Relay(
      this.writer,
      () => this.extended.onError(),
      (leg, code) =>
        this.log.warn({ region: leg.region, code: String.fromCharCode(code) }, "unexpected backend message"),
      () => this.status(),
    );
    this.extended = new ExtendedQuery(this);
    this.relay.onCopyIn = (leg) => this.onCopyIn(leg);
    this.closedPromise = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (error) => this.log.debug({ err: error.message }, "client socket error"));
    socket.on("close", () => this.onClose());
    this.log.info("client connected");
    this.observed = runtime.observability.track(this);
  }

  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** The schemas of the search_path the client set (with `$user` as its role), or undefined. */
  searchPath(): readonly string[] | undefined {
    const schemas = this.settings.searchPath();
    if (schemas === undefined || !schemas.includes("$user")) return schemas;
    return schemas.map((schema) => (schema === "$user" ? this.user : schema));
  }

  /** The transaction status the client is told in ReadyForQuery. */
  status(): TransactionStatus {
    return this.txn?.status ?? "I";
  }

  /** True when nothing is in flight and no transaction is open: the session can be closed cleanly. */
  get idle(): boolean {
    return this.txn === null && this.relay.pending === 0 && !this.processing && this.inbox.length === 0;
  }

  readyForQuery(): Buffer {
    return encodeReadyForQuery({ status: this.status() });
  }

  // ------------------------------------------------------------------------------------------
  // Input
  // ------------------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    if (this.phase === "closed") return;
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) {
        this.log.info({ reason: frame.message }, "client sent malformed bytes");
        this.fatal(protocolViolation(frame));
        return;
      }
      // COPY data goes straight to the backend while the statement waiting for it runs.
      if (this.copyInLeg !== null && isCopyFromClient(frame.code) && this.inbox.length === 0) {
        this.copyToBackend(frame);
        continue;
      }
      if (frame.code === STARTUP_FRAME_CODE) {
        this.onStartupFrame(frame);
        if ((this.phase as SessionPhase) === "closed") return;
        continue;
      }
      if (this.phase === "startup") {
        this.fatal(unexpectedMessage(`message '${String.fromCharCode(frame.code)}' during startup`));
        return;
      }
      this.inbox.push(copyFrame(frame));
    }
    if (this.inbox.length > INBOX_HIGH) this.socket.pause();
    this.kick();
  }

  /** The leg a COPY FROM STDIN of the client's is writing to, between CopyInResponse and CopyDone/CopyFail. */
  private copyInLeg: Leg | null = null;

  /** The backend asked for the client's COPY data: what the client already sent goes first. */
  private onCopyIn(leg: Leg): void {
    this.copyInLeg = leg;
    while (this.copyInLeg !== null && this.inbox.length > 0 && isCopyFromClient(this.inbox[0]!.code)) {
      this.copyToBackend(this.inbox.shift()!);
    }
  }

  private copyToBackend(frame: Frame): void {
    const leg = this.copyInLeg!;
    if (frame.code !== FrontendCode.CopyData) this.copyInLeg = null;
    if (leg.broken !== null) return;
    // Copied: the framer reuses its buffer, and the socket keeps what it was given until sent.
    if (!leg.write(Buffer.from(frame.bytes)) && !this.socket.isPaused()) {
      // The backend reads slower than the client sends: stop reading the client meanwhile.
      this.socket.pause();
      void leg.connection.drained().then(() => {
        if (this.inbox.length < INBOX_HIGH) this.socket.resume();
      });
    }
  }

  private kick(): void {
    if (this.processing || this.inbox.length === 0 || this.phase !== "ready") return;
    this.processing = true;
    this.process()
      .catch((error: unknown) => {
        this.log.error({ err: error }, "session failed");
        this.fatal(internalError(error));
      })
      .finally(() => {
        this.processing = false;
        if (this.phase === "ready") this.kick();
      });
  }

  private async process(): Promise<void> {
    while (this.inbox.length > 0 && this.phase === "ready") {
      const frame = this.inbox.shift()!;
      if (this.inbox.length < INBOX_LOW && this.socket.isPaused()) this.socket.resume();
      await this.handle(frame);
      this.observed.afterMessage(frame.code);
    }
  }

  private async handle(frame: Frame): Promise<void> {
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
        await this.relay.idle();
        this.relay.error(refuseFunctionCall(), false);
        this.relay.local({ bytes: () => this.readyForQuery() });
        return;
      case FrontendCode.CopyData:
      case FrontendCode.CopyDone:
      case FrontendCode.CopyFail:
        // A COPY's data queued behind other messages goes to its backend in order; outside a
        // COPY FROM these are ignored, as PostgreSQL does.
        if (this.copyInLeg !== null) this.copyToBackend(frame);
        return;
      default:
        this.fatal(unexpectedMessage(`message type '${String.fromCharCode(frame.code)}'`));
    }
  }

  // ------------------------------------------------------------------------------------------
  // Startup
  // ------------------------------------------------------------------------------------------

  private onStartupFrame(frame: Frame): void {
    if (this.phase !== "startup") {
      this.fatal(unexpectedMessage("startup packet after the StartupMessage"));
      return;
    }
    const packet = decodeStartupPacket(frame.payload);
    if (isProtocolFault(packet)) {
      this.fatal(protocolViolation(packet));
      return;
    }
    switch (packet.type) {
      case "SSLRequest":
        // No TLS configured for clients: 'N', and the client continues in clear (or gives up).
        this.writer.write(Messages.sslRefused);
        return;
      case "GSSENCRequest":
        this.writer.write(Messages.sslRefused);
        return;
      case "CancelRequest":
        this.onCancelRequest(packet);
        return;
      case "StartupMessage":
        // Messages pipelined behind the StartupMessage wait in the inbox until the login is answered.
        this.phase = "login";
        this.startup(packet);
        this.kick();
        return;
    }
  }

  private onCancelRequest(request: CancelRequest): void {
    const matched = this.runtime.cancels.cancel(request.processId, Buffer.from(request.secretKey));
    this.log.info({ matched }, "cancel request");
    // PostgreSQL answers a CancelRequest with nothing and closes.
    this.phase = "closed";
    this.socket.end();
  }

  private startup(message: StartupMessage): void {
    const check = checkStartup(message);
    if (!check.ok) {
      this.fatal(check.error);
      return;
    }
    if (this.runtime.shuttingDown) {
      this.fatal(shuttingDown());
      return;
    }
    this.user = check.user;
    this.database = check.database;
    this.framer.markAuthenticated();
    this.settings = SessionSettings.fromStartup(message.parameters);
    // Checked now, as PostgreSQL checks them at connect: replayed later, a bad one would fail
    // every statement instead of the login.
    const home = this.runtime.router.topology.home.id;
    checkStartupSettings(
      startupSettings(message.parameters),
      this.runtime.pools,
      () => this.runtime.pools.acquire(home, this.user, this.database),
      // Answers are remembered per role and database: another database may not exist.
      `${this.user}\u0000${this.database}`,
    ).then(
      (reported) => {
        if (reported instanceof PgError) this.fatal(reported);
        else this.completeLogin(message, check.negotiate, reported);
      },
      (error: unknown) => this.fatal(internalError(error)),
    );
  }

  private completeLogin(
    message: StartupMessage,
    negotiate: Buffer | null,
    reported: ReadonlyMap<string, string>,
  ): void {
    // As the server reports them to this client: its own settings and user (startup.ts).
    const parameters = loginParameters(this.runtime.homeParameters, reported, message.parameters);
    if (this.phase === "closed") return;
    const pool = this.runtime.config.pool;
    if (
      pool.mode === "session" ||
      pool.sessionRoles.includes(this.user) ||
      pool.sessionDatabases.includes(this.database)
    ) {
      void this.openSessionLeg().then((leg) => {
        if (leg instanceof PgError) this.fatal(leg);
        else if (this.phase !== "closed")
          this.sendLoginReply(parameters, negotiate, leg.connection.processId);
        else leg.release(true);
      });
      return;
    }
    this.sendLoginReply(parameters, negotiate, undefined);
  }

  /**
   * Session pooling: the client's own home-region connection for its whole session, as with one
   * server. The settings it connected with are replayed there before its first statement.
   */
  private async openSessionLeg(): Promise<Leg | PgError> {
    const home = this.runtime.router.topology.home.id;
    let lease: Lease;
    try {
      lease = await this.runtime.pools.acquire(home, this.user, this.database);
    } catch (error) {
      return error instanceof PgError ? error : internalError(error);
    }
    const leg = new Leg(
      home,
      lease,
      (from, frame) => this.relay.onFrame(from, frame),
      (broken, error) => this.onLegBroken(broken, error),
    );
    const replayed = this.replaySettings(leg);
    const failed = replayed === null ? null : await replayed;
    if (failed !== null) {
      leg.retire = true;
      leg.release(true);
      return failed;
    }
    this.sessionMode = true;
    this.pinnedLeg = leg;
    leg.connection.markDirty("full");
    this.activeLeg = leg;
    return leg;
  }

  /** Session pooling: the client keeps its connection whatever it does (see `openSessionLeg`). */
  private sessionMode = false;

  private sendLoginReply(
    parameters: Map<string, string>,
    negotiate: Buffer | null,
    backendPid: number | undefined,
  ): void {
    // With a connection of its own the client is told its backend's process id, as
    // pg_backend_pid() and the server's views report it.
    this.key = this.runtime.cancels.register(this, backendPid);
    if (negotiate !== null) this.writer.write(negotiate);
    this.writer.write(loginReply(parameters, this.key));
    this.writer.write(Messages.readyForQueryIdle);
    this.phase = "ready";
    this.log.info({ user: this.user, database: this.database }, "client logged in");
    // Messages the client pipelined behind its StartupMessage waited for this.
    this.kick();
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
    const txn = this.txn;
    if (anywhere) {
      // Inside a block only the block's own legs will do: a pinned or batch connection outside
      // it would run the statement in autocommit, and its failure would not fail the block.
      if (txn !== null) {
        const primary = txn.primaryLeg();
        if (primary !== undefined) return this.activate(primary);
        if (this.pinnedLeg !== null) region = this.pinnedLeg.region;
      } else {
        const held = this.pinnedLeg ?? this.batchLegs.values().next().value;
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
      const replicaLeg = readsReplica ? this.replicas.batchLegs.get(region) : undefined;
      if (replicaLeg !== undefined) return this.activate(replicaLeg);
    }
    if (this.relay.pending > 0) await this.quiesceActive();
    let leg: Leg;
    if (this.pinnedLeg !== null && this.pinnedLeg.region === region) leg = this.pinnedLeg;
    else {
      let lease: Lease;
      try {
        lease = readsReplica
          ? await acquireRead(this, region)
          : (this.runtime.pools.tryAcquire(region, this.user, this.database) ??
            (await this.runtime.pools.acquire(region, this.user, this.database)));
      } catch (error) {
        return error instanceof PgError ? error : internalError(error);
      }
      if (this.phase === "closed") {
        // The client left while waiting for the connection: nobody would ever give it back.
        lease.release();
        return clientGone();
      }
      leg = new Leg(
        region,
        lease,
        (from, frame) => this.relay.onFrame(from, frame),
        (broken, error) => this.onLegBroken(broken, error),
      );
      const replayed = this.replaySettings(leg);
      if (replayed !== null) {
        const failed = await replayed;
        if (failed !== null || leg.broken !== null) {
          // The connection holds part of the settings, or none: closed, never reused.
          leg.retire = true;
          leg.release(true);
          return failed ?? leg.broken ?? internalError("the connection broke while settings were replayed");
        }
      }
    }
    if (txn !== null) {
      txn.legs.set(region, leg);
      this.relay.expect({ leg, kind: "query", mode: "quiet", dropReadyForQuery: true });
      leg.write(encodeQuery({ sql: txn.openingSql() }));
    } else if (mode.extended)
      (replicaOf(leg) === undefined ? this.batchLegs : this.replicas.batchLegs).set(region, leg);
    this.activeLeg = leg;
    if (mode.extended) this.extended.touch(leg);
    return leg;
  }

  /**
   * Makes the connection's settings the client's, before BEGIN so a rollback keeps them.
   * Resolves with null once they are (at once when nothing differs), or with the error the
   * server gave: the client's statement must then not run there, since it would run with other
   * settings than the client's (another role, say).
   */
  private replaySettings(leg: Leg): Promise<PgError | null> | null {
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
          resolve(unit.failed ? (failure ?? internalError("a setting could not be replayed")) : null);
        },
        skipped: () => resolve(internalError("a setting could not be replayed")),
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
    if (this.activeLeg !== leg) await this.quiesceActive();
    this.activeLeg = leg;
    if (this.extended.inBatch) this.extended.touch(leg);
    return leg;
  }

  get currentLeg(): Leg | null {
    return this.activeLeg;
  }

  /** Before another leg is written to, the answers of the one in use must be complete. */
  async quiesceActive(): Promise<void> {
    const active = this.activeLeg;
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
    if (leg === this.pinnedLeg || leg.outstanding > 0) return;
    if (this.txn?.legs.get(leg.region) === leg) return;
    if (this.batchLegs.get(leg.region) === leg) this.batchLegs.delete(leg.region);
    this.replicas.forget(leg);
    if (this.activeLeg === leg) this.activeLeg = null;
    leg.release(false);
  }

  private onLegBroken(leg: Leg, error: PgError): void {
    this.log.warn({ region: leg.region, err: error.message }, "backend connection lost");
    const wasPinned = leg === this.pinnedLeg;
    if (wasPinned && this.sessionMode) {
      // The client's own server session ended: so does the client's, as PostgreSQL ends it.
      this.pinnedLeg = null;
      leg.release(true);
      this.fatal(pinnedConnectionLost(leg.region));
      return;
    }
    if (wasPinned) {
      this.pinnedLeg = null;
      this.pins.record({
        sessionEffects: [{ kind: "discard", local: false, value: "all" }],
      } as unknown as Analysis);
    }
    const txn = this.txn;
    if (txn?.legs.get(leg.region) === leg) {
      txn.legs.delete(leg.region);
      txn.failed = true;
    }
    if (this.batchLegs.get(leg.region) === leg) this.batchLegs.delete(leg.region);
    this.replicas.forget(leg);
    if (this.activeLeg === leg) this.activeLeg = null;
    if (this.copyInLeg === leg) this.copyInLeg = null;
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
            this.pinnedLeg = leg;
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
      if (SessionPins.pins(analysis) && this.pins.pinned && this.pinnedLeg === null) {
        this.pinnedLeg = leg;
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
    if (leg === null || this.sessionMode || this.pins.pinned || this.txn !== null || this.extended.inBatch)
      return;
    this.pinnedLeg = null;
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
        const txn = new Transaction("BEGIN", false, this.settings.snapshot());
        txn.legs.set(leg.region, leg);
        this.txn = txn;
        return;
      }
      this.releaseLeg(leg);
      return;
    }
    if (status === "I" && this.txn.legs.size === 1 && this.txn.legs.get(leg.region) === leg) {
      // The transaction ended inside a string sent as one (BEGIN ... COMMIT to one region).
      this.txn = null;
      this.releaseLeg(leg);
    }
  }

  /** Sends a proxy error in its place; inside a transaction block the block fails, as in PostgreSQL. */
  fail(error: PgError, mode: StatementMode): void {
    if (this.txn !== null) this.txn.failed = true;
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
    if (this.status() !== "E") return false;
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

  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO, PREPARE TRANSACTION. */
  async runTransactionControl(analysis: Analysis, mode: StatementMode): Promise<void> {
    if (mode.extended && this.pipelineTransactionControl(analysis)) return;
    await this.quiesceActive();
    await this.relay.idle();
    const control = analysis.transaction!;
    const txn = this.txn;
    const tagOnly = (tag: string, notice?: PgError): void => {
      if (notice !== undefined) this.relay.local({ bytes: encodeNoticeResponse(notice) });
      this.relay.local({ bytes: encodeCommandComplete({ tag }) });
      if (mode.final) this.relay.local({ bytes: () => this.readyForQuery() });
    };
    switch (control.action) {
      case "begin": {
        if (txn === null) {
          this.txn = new Transaction(analysis.text, false, this.settings.snapshot());
          tagOnly("BEGIN");
        } else if (txn.implicit) {
          txn.implicit = false;
          tagOnly("BEGIN");
        } else {
          tagOnly(
            "BEGIN",
            warning(SqlState.active_sql_transaction, "there is already a transaction in progress"),
          );
        }
        return;
      }
      case "commit":
      case "rollback":
      case "prepare": {
        if (txn === null) {
          const tag =
            control.action === "commit"
              ? "COMMIT"
              : control.action === "rollback"
                ? "ROLLBACK"
                : "PREPARE TRANSACTION";
          if (control.action === "prepare") {
            this.fail(
              new PgError({
                code: SqlState.no_active_sql_transaction,
                message: "there is no transaction in progress",
              }),
              mode,
            );
            return;
          }
          if (control.chain === true) {
            // PostgreSQL refuses a chain with no block to chain from (25P01).
            this.fail(
              new PgError({
                code: SqlState.no_active_sql_transaction,
                message: `${tag} AND CHAIN can only be used in transaction blocks`,
              }),
              mode,
            );
            return;
          }
          tagOnly(tag, warning(SqlState.no_active_sql_transaction, "there is no transaction in progress"));
          return;
        }
        await this.endTransaction(analysis, mode);
        return;
      }
      case "savepoint":
      case "release":
      case "rollback-to": {
        if (txn === null) {
          // PostgreSQL's own error (25P01) from the home region.
          await this.forwardToHome(analysis, mode);
          return;
        }
        const name = control.name ?? "";
        if (control.action === "savepoint") txn.savepoint(name, analysis.text, this.settings.snapshot());
        else {
          const before = txn.unwindTo(name, control.action === "rollback-to");
          if (before !== undefined) this.settings.restore(before);
        }
        if (control.action === "rollback-to") txn.failed = false;
        const legs = [...txn.legs.values()];
        const primary = txn.primaryLeg();
        if (primary === undefined) {
          tagOnly(
            control.action === "savepoint"
              ? "SAVEPOINT"
              : control.action === "release"
                ? "RELEASE"
                : "ROLLBACK",
          );
          return;
        }
        for (const leg of legs)
          if (leg !== primary) await this.runOnLeg(leg, analysis.text, "silent", mode.extended);
        await this.runOnLeg(primary, analysis.text, "relay", mode.extended);
        if (mode.final) this.relay.local({ bytes: () => this.readyForQuery() });
        await this.settle();
        return;
      }
      case "commit-prepared":
      case "rollback-prepared":
        await this.forwardToHome(analysis, mode);
        return;
    }
  }

  /**
   * BEGIN, and COMMIT or ROLLBACK of a block held on one connection, inside an extended batch:
   * handled without waiting for the answers before them. After an error a server holds its
   * answers, and skips every message, until the client's Sync; waiting here would never end
   * (libpq's pipeline mode sends BEGIN, statements, COMMIT and only then Sync). The server
   * decides the outcome, as it would alone: a COMMIT it skips leaves the block failed, and a
   * COMMIT of a failed block answers ROLLBACK. False when the general path must run.
   */
  private pipelineTransactionControl(analysis: Analysis): boolean {
    const action = analysis.transaction!.action;
    const txn = this.txn;
    if (action === "begin") {
      if (txn !== null && !txn.implicit) return false;
      if (txn === null) this.txn = new Transaction(analysis.text, false, this.settings.snapshot());
      else txn.implicit = false;
      this.relay.local({ bytes: encodeCommandComplete({ tag: "BEGIN" }) });
      return true;
    }
    if ((action !== "commit" && action !== "rollback") || txn === null) return false;
    if (analysis.transaction!.chain === true) return false;
    if (txn.legs.size !== 1 || txn.writeRegions.size > 1) return false;
    const leg = txn.legs.values().next().value as Leg;
    if (leg.broken !== null) return false;
    const commit = action === "commit" && !txn.failed;
    let committed = commit;
    const ended = (): void => {
      if (this.txn === txn) this.txn = null;
      this.runtime.observability.blockEnded(action, committed);
      if (!committed) this.settings.restore(txn.settingsBefore);
      txn.settleSettings(committed, (applied) => this.settings.markApplied(applied));
      // Given back at the batch's Sync, once the server has answered it.
      if (leg !== this.pinnedLeg)
        (replicaOf(leg) === undefined ? this.batchLegs : this.replicas.batchLegs).set(leg.region, leg);
    };
    this.extended.touch(leg);
    this.relay.expect({ leg, kind: "parse", mode: "quiet" });
    this.relay.expect({ leg, kind: "bind", mode: "silent" });
    this.relay.expect({
      leg,
      kind: "execute",
      mode: "relay",
      inspect: (frame) => {
        // A failed block answers COMMIT with ROLLBACK.
        if (
          frame.code === BackendCode.CommandComplete &&
          frame.payload.toString("latin1", 0, 8) === "ROLLBACK"
        )
          committed = false;
      },
      done: (unit) => {
        if (unit.failed) committed = false;
        ended();
      },
    });
    leg.write([
      encodeParse({ name: "", sql: commit ? "COMMIT" : "ROLLBACK", paramTypes: [] }),
      encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
      encodeExecute({ portal: "", maxRows: 0 }),
    ]);
    return true;
  }

  private async forwardToHome(analysis: Analysis, mode: StatementMode): Promise<void> {
    const home = this.runtime.router.topology.home.id;
    const route: Route = { kind: "region", region: home, readOnly: true, anywhere: false };
    const leg = await this.runRouted(analysis, route, mode, (l) => {
      if (mode.extended) {
        this.writeOnLeg(l, analysis.text, "relay", true);
        return;
      }
      this.relay.expect({
        leg: l,
        kind: "query",
        mode: "relay",
        dropReadyForQuery: !mode.final,
        done: (_unit, status) => this.afterReady(l, status),
      });
      l.write(encodeQuery({ sql: analysis.text }));
    });
    if (leg !== null) await this.settle();
  }

  /**
   * COMMIT or ROLLBACK of a block spread over legs: the read legs end first (silently), the
   * written leg's answer is the client's. A failed block (or ROLLBACK) rolls every leg back.
   */
  private async endTransaction(analysis: Analysis, mode: StatementMode): Promise<void> {
    const txn = this.txn!;
    const action = analysis.transaction!.action;
    const commit = action === "commit" && txn.status !== "E";
    const chain = analysis.transaction!.chain === true;
    const legs = [...txn.legs.values()];
    if (action === "prepare" && txn.writeRegions.size > 1) {
      this.fail(refuseClientPrepareAcrossRegions([...txn.writeRegions]), mode);
      return;
    }
    if (action === "prepare" && legs.length > 1) {
      this.fail(refuseSecondWriteRegion(txn.writeRegion ?? legs[0]!.region, legs[1]!.region), mode);
      return;
    }
    if (action === "prepare" && legs.length === 0 && !txn.failed) {
      // Nothing ran in the block yet: PostgreSQL still prepares it (empty), so a server must.
      const opened = await this.legFor(
        this.pinnedLeg?.region ?? this.runtime.router.topology.home.id,
        false,
        mode,
      );
      if (opened instanceof PgError) {
        this.fail(opened, mode);
        return;
      }
      legs.push(opened);
    }
    const primary = txn.primaryLeg();
    let committed = commit;
    const twoPhase = commit && txn.writeRegions.size > 1;
    if (twoPhase) {
      const error = await commitAcrossRegions(this, txn);
      if (error === null) this.relay.local({ bytes: encodeCommandComplete({ tag: "COMMIT" }) });
      else {
        committed = false;
        this.relay.error(error, mode.extended);
      }
    } else {
      for (const leg of legs) {
        if (leg === primary) continue;
        await this.runOnLeg(leg, commit ? "COMMIT" : "ROLLBACK", "quiet", mode.extended, (unit) => {
          if (unit.failed) committed = false;
        });
      }
      if (primary === undefined) {
        this.relay.local({ bytes: encodeCommandComplete({ tag: commit ? "COMMIT" : "ROLLBACK" }) });
      } else {
        // The client's own statement where it applies (COMMIT AND CHAIN, ROLLBACK AND CHAIN,
        // PREPARE TRANSACTION); a failed block is rolled back, chained as the client asked.
        const sql =
          action === "prepare" || action === "rollback" || commit
            ? analysis.text
            : chain
              ? "ROLLBACK AND CHAIN"
              : "ROLLBACK";
        await this.runOnLeg(primary, sql, "relay", mode.extended, (unit) => {
          if (unit.failed) committed = false;
        });
      }
    }
    await this.settle();
    this.txn = null;
    if (chain && action !== "prepare") {
      // AND CHAIN: a new block with the same characteristics begins at once. The written leg's
      // server began it already; other regions get the block's BEGIN when they are reached.
      const next = new Transaction(txn.beginSql, false, this.settings.snapshot());
      if (!twoPhase && primary !== undefined && primary.broken === null) {
        next.legs.set(primary.region, primary);
        legs.splice(legs.indexOf(primary), 1);
      }
      this.txn = next;
    }
    if (!twoPhase) this.runtime.observability.blockEnded(action, committed);
    if (!committed) this.settings.restore(txn.settingsBefore);
    txn.settleSettings(committed, (applied) => this.settings.markApplied(applied));
    for (const leg of legs) {
      if (mode.extended && leg.broken === null && leg !== this.pinnedLeg)
        (replicaOf(leg) === undefined ? this.batchLegs : this.replicas.batchLegs).set(leg.region, leg);
      else this.releaseLeg(leg);
    }
    if (mode.final) this.relay.local({ bytes: () => this.readyForQuery() });
  }

  /** SET, RESET, DISCARD, LISTEN...: run where the session's state lives, then tracked. */
  async runSessionStatement(analysis: Analysis, mode: StatementMode, sql: string): Promise<void> {
    const region =
      this.txn?.primaryLeg()?.region ?? this.pinnedLeg?.region ?? this.runtime.router.topology.home.id;
    const prepareRefused = this.refusePrepareElsewhere(analysis, region);
    if (prepareRefused !== null) {
      this.fail(prepareRefused, mode);
      return;
    }
    const route: Route = { kind: "region", region, readOnly: true, anywhere: false };
    // RESET, RESET ALL, DISCARD ALL return to the client's startup values (settings/reset-to-startup.ts).
    const reset = resetToStartup(this.settings, analysis, this.txn !== null);
    await this.runRouted(analysis, route, mode, (leg) => {
      if (reset !== null) {
        sendResetToStartup(this, leg, analysis, reset, mode);
        return;
      }
      if (mode.extended) {
        this.writeOnLeg(leg, sql, "relay", true, (unit) => {
          if (!unit.failed) this.recordEffects(leg, [analysis]);
        });
        return;
      }
      this.relay.expect({
        leg,
        kind: "query",
        mode: "relay",
        dropReadyForQuery: !mode.final,
        done: (unit, status) => {
          if (!unit.failed) this.recordEffects(leg, [analysis]);
          this.afterReady(leg, status);
        },
      });
      leg.write(encodeQuery({ sql }));
    });
    const before = this.relay.errorsSent;
    await this.settle();
    const txn = this.txn;
    const settingsOnly = analysis.sessionEffects.every(
      (effect) => effect.kind === "set" || effect.kind === "reset" || effect.kind === "set-config",
    );
    if (
      txn === null ||
      this.relay.errorsSent > before ||
      !settingsOnly ||
      analysis.sessionEffects.length === 0
    ) {
      return;
    }
    // Inside a block a setting holds in every region the block reaches: the legs already open get
    // it now, later ones with their BEGIN (SET LOCAL) or with the session's settings (SET).
    const primary = txn.primaryLeg();
    for (const leg of [...txn.legs.values()]) {
      if (leg === primary || leg.broken !== null) continue;
      await this.runOnLeg(leg, sql, "quiet", mode.extended);
      if (analysis.sessionEffects.some((effect) => !effect.local)) txn.settingsLegs.add(leg);
    }
    if (analysis.sessionEffects.every((effect) => effect.local)) txn.localSettings.push(sql);
    await this.settle();
  }

  /**
   * SQL-level prepared statements live on the connection the PREPARE ran on, and every EXECUTE
   * runs there: a statement is prepared only when all of it runs in that connection's region
   * (always, with one region). Null when it may be prepared; otherwise the refusal.
   */
  private refusePrepareElsewhere(analysis: Analysis, region: string): PgError | null {
    const router = this.runtime.router;
    if (router.topology.regions.length === 1) return null;
    if (!analysis.sessionEffects.some((effect) => effect.kind === "prepare")) return null;
    const text = preparedStatementText(analysis.text);
    if (text === undefined) return null;
    const inner = router.analyze(text);
    // A statement the proxy cannot read is the server's to refuse at PREPARE.
    if (inner instanceof PgError) return null;
    const decided = router.plan(inner);
    if (decided.kind === "local" || (decided.kind === "single" && decided.region === region)) return null;
    const where =
      decided.kind === "single"
        ? `region ${decided.region}`
        : decided.kind === "scatter" || decided.kind === "distributed-write"
          ? `regions ${decided.regions.join(", ")}`
          : decided.kind === "deferred"
            ? "the region its arguments choose"
            : "no single region";
    return refuseSqlPrepareAcrossRegions(region, where);
  }

  /** Console commands answered from the proxy's own state, as an ordinary result set. */
  runConsole(analysis: Analysis, mode: StatementMode, describe: boolean): void {
    const result = runConsoleCommand(
      analysis.text,
      this.runtime.consoleContext(this.user, this.socket.remoteAddress),
    );
    if (result instanceof PgError) {
      this.fail(result, mode);
      return;
    }
    const parts: Buffer[] = [];
    if (describe) parts.push(textRowDescription(result.columns));
    for (const row of result.rows) {
      parts.push(encodeDataRow({ values: row.map((value) => (value === null ? null : Buffer.from(value))) }));
    }
    parts.push(encodeCommandComplete({ tag: result.tag }));
    this.relay.local({ bytes: Buffer.concat(parts) });
    if (mode.final) this.relay.local({ bytes: () => this.readyForQuery() });
  }

  /** The RowDescription a console command answers with (Describe before Execute). */
  consoleDescription(analysis: Analysis): Buffer | null {
    const result = runConsoleCommand(analysis.text, this.runtime.consoleContext(this.user));
    return result instanceof PgError ? null : textRowDescription(result.columns);
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
    const legs = new Set<Leg>([...(this.txn?.legs.values() ?? []), ...this.batchLegs.values()]);
    if (this.activeLeg !== null) legs.add(this.activeLeg);
    if (this.pinnedLeg !== null) legs.add(this.pinnedLeg);
    for (const leg of legs) {
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
    this.phase = "closed";
    this.relay.flush();
    this.writer.uncork();
    this.socket.end();
    this.socket.destroySoon?.();
    this.cleanup();
  }

  private onClose(): void {
    this.phase = "closed";
    this.cleanup();
    this.log.info("client disconnected");
    this.resolveClosed();
  }

  private cleaned = false;

  private cleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    if (this.key !== null) this.runtime.cancels.unregister(this.key.processId);
    const legs = new Set<Leg>([
      ...(this.txn?.legs.values() ?? []),
      ...this.batchLegs.values(),
      ...this.replicas.heldLegs(),
    ]);
    if (this.pinnedLeg !== null) legs.add(this.pinnedLeg);
    if (this.activeLeg !== null) legs.add(this.activeLeg);
    this.txn = null;
    this.batchLegs.clear();
    this.replicas.batchLegs.clear();
    for (const leg of legs) {
      if (leg.broken === null && !leg.connection.isQuiescent) {
        // The client left mid-statement: stop the statement on the server (it would hold its
        // locks until it ends), and close the connection rather than reuse it.
        leg.retire = true;
        leg.connection.cancel().catch((error: unknown) => this.log.debug({ err: error }, "cancel failed"));
      }
      // An open transaction or pinned objects need a full reset.
      leg.release(true);
    }
    this.pinnedLeg = null;
    this.activeLeg = null;
  }
}

function isCopyFromClient(code: number): boolean {
  return code === FrontendCode.CopyData || code === FrontendCode.CopyDone || code === FrontendCode.CopyFail;
}

/** Console answers are text columns, as PostgreSQL describes `text`. */
function textRowDescription(columns: readonly string[]): Buffer {
  return encodeRowDescription({
    fields: columns.map((name) => ({
      name,
      tableOid: 0,
      columnAttr: 0,
      typeOid: 25,
      typeSize: -1,
      typeModifier: -1,
      format: 0,
    })),
  });
}

function warning(code: PgError["code"], message: string): PgError {
  return new PgError({ code, message, severity: "WARNING" });
}
