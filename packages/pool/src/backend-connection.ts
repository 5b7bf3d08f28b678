import { connect as netConnect, type Socket } from "node:net";
import {
  BackendCode,
  BackendFramer,
  decodeAuthentication,
  decodeBackendKeyData,
  decodeDataRow,
  decodeErrorResponse,
  decodeParameterStatus,
  decodeRowDescription,
  encodeCancelRequest,
  encodeCopyFail,
  encodePasswordMessage,
  encodeQuery,
  encodeSASLInitialResponse,
  encodeSASLResponse,
  encodeStartupMessage,
  type Frame,
  isProtocolFault,
  isScramFailure,
  Messages,
  md5FromStored,
  md5PasswordHash,
  PgError,
  readyForQueryStatus,
  SCRAM_SHA_256,
  ScramClient,
  type TransactionStatus,
} from "@geo/proto";
import {
  backendAuthUnsupported,
  backendConnectFailed,
  backendConnectionLost,
  backendConnectTimeout,
  backendNeedsMoreThanMd5Hash,
  backendPasswordMissing,
  backendProtocolViolation,
  backendScramFailed,
  connectionUnusable,
  internalStatementTimeout,
  receiverFailed,
  replyInFlight,
} from "./errors.js";
import { OwedReady } from "./owed-ready.js";
import { ResetKind, strongerReset } from "./reset-kind.js";

/**
 * Replaces the plain TCP socket before the StartupMessage is sent. This is where TLS to backends
 * plugs in: send SSLRequest, read the one-byte answer, then `tls.connect({ socket })`. The hook
 * must resolve with the socket to speak the protocol on, or reject (with a PgError, ideally).
 */
export type TransportUpgrade = (
  socket: Socket,
  context: { readonly address: string; readonly signal: AbortSignal },
) => Promise<Socket>;

/**
 * SCRAM keys for logging in without the password: the ClientKey revealed by a client's own SCRAM
 * proof to the proxy (passthrough). With `serverKey` the backend's signature is checked too.
 */
export interface ScramKeyCredentials {
  readonly clientKey: Buffer;
  readonly serverKey?: Buffer | undefined;
}

/** Where and as whom to connect. */
export interface ConnectOptions {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** Answers cleartext, MD5 and SCRAM-SHA-256 requests. */
  readonly password?: string | undefined;
  /** SCRAM-SHA-256 without the password (passthrough); used when `password` is absent. */
  readonly scramKeys?: ScramKeyCredentials | undefined;
  /**
   * The role's stored MD5 hash (`md5` + 32 hex digits, what pg_authid holds), for MD5 passthrough;
   * used when `password` is absent. An MD5 login needs only this hash, but a cleartext or SCRAM
   * request cannot be answered from it (`backendNeedsMoreThanMd5Hash`).
   */
  readonly md5Hash?: string | undefined;
  /** Sent as `application_name` in the StartupMessage. */
  readonly applicationName?: string | undefined;
  /** Covers TCP connect, transport upgrade, authentication and the first ReadyForQuery. */
  readonly connectTimeoutMs: number;
  /** More StartupMessage parameters (e.g. `options`, `DateStyle`); `user`/`database` win. */
  readonly startupParams?: Readonly<Record<string, string>> | undefined;
  /** Optional transport negotiation (TLS) run after TCP connect; see `TransportUpgrade`. */
  readonly upgrade?: TransportUpgrade | undefined;
}

/** The result of `simpleQuery`: rows in text format (the last result set of the string). */
export interface SimpleQueryResult {
  readonly fields: string[];
  readonly rows: (string | null)[][];
  /** The tag of the last CommandComplete ("SELECT 1", "SET", "DISCARD ALL"), "" if none. */
  readonly tag: string;
}

/**
 * Takes every backend message while set on a connection. The frame's `bytes` and `payload` are
 * views valid only during `onFrame`: relay them at once or copy them.
 */
export interface FrameReceiver {
  onFrame(frame: Frame): void;
  /** The connection broke while this receiver was set (08006 or the server's FATAL error). */
  onBroken?(error: PgError): void;
}

/** Where a backend connection stands. */
export const ConnectionPhase = {
  connecting: "connecting",
  authenticating: "authenticating",
  ready: "ready",
  closed: "closed",
  broken: "broken",
} as const;
export type ConnectionPhase = (typeof ConnectionPhase)[keyof typeof ConnectionPhase];

interface PendingQuery {
  readonly resolve: (result: SimpleQueryResult) => void;
  readonly reject: (error: unknown) => void;
  readonly previousReceiver: FrameReceiver | null;
  fields: string[];
  rows: (string | null)[][];
  tag: string;
  error: PgError | null;
  timer: NodeJS.Timeout | null;
}

let nextConnectionId = 1;

/**
 * One authenticated connection to a PostgreSQL backend. The proxy writes raw protocol bytes with
 * `write` and receives every backend message through its `FrameReceiver`, relaying bytes without
 * decoding rows. The connection itself only peeks at ReadyForQuery (transaction status),
 * ParameterStatus (server parameters) and FATAL errors (why it broke).
 *
 * @example
 * ```ts
 * const conn = await BackendConnection.connect({
 *   host: "127.0.0.1", port: 5432, database: "app", user: "app", password: "secret",
 *   connectTimeoutMs: 5000,
 * });
 * conn.setReceiver({ onFrame: (frame) => client.write(frame.bytes) });
 * conn.write(encodeQuery({ sql: "SELECT 1" }));
 * // ... later, for internal statements:
 * conn.setReceiver(null);
 * const { rows } = await conn.simpleQuery("SHOW TimeZone");
 * await conn.close();
 * ```
 */
export class BackendConnection {
  /** Unique within the process, for logs. */
  readonly id = nextConnectionId++;
  /** `host:port` of the backend. */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** `Date.now()` when the connection became ready. */
  readonly createdAt: number;
  /** ParameterStatus values, kept current from every ParameterStatus the server sends. */
  readonly parameters = new Map<string, string>();
  /**
   * Server-side prepared statements created on this connection by its owner, by name. The pool
   * clears it when a full reset (DISCARD ALL) deallocates them.
   */
  readonly preparedStatements = new Map<string, unknown>();
  /** Session settings the owner applied here (name -> value); cleared by every reset. */
  readonly appliedSettings = new Map<string, string>();

  private socket: Socket;
  private readonly framer = new BackendFramer();
  private readonly options: ConnectOptions;
  private currentPhase: ConnectionPhase = ConnectionPhase.authenticating;
  private status: TransactionStatus = "I";
  private readies = 0;
  private pid = 0;
  private key: Buffer = Buffer.alloc(0);
  private receiver: FrameReceiver | null = null;
  private readonly brokenListeners = new Set<(error: PgError) => void>();
  private failure: PgError | null = null;
  private fatal: PgError | null = null;
  private paused = false;
  private draining = false;
  private corked = false;
  /** What the server still owes for the bytes written: at rest only when it answered all of it. */
  private readonly owedReady = new OwedReady();
  private dirtyKind: ResetKind = ResetKind.none;
  private pending: PendingQuery | null = null;
  private queryChain: Promise<unknown> = Promise.resolve();
  private startup: {
    resolve: () => void;
    reject: (error: PgError) => void;
    scram: ScramClient | null;
  } | null = null;
  private closedPromise: Promise<void>;

  private constructor(socket: Socket, options: ConnectOptions) {
    this.socket = socket;
    this.options = options;
    this.host = options.host;
    this.port = options.port;
    this.address = `${options.host}:${options.port}`;
    this.database = options.database;
    this.user = options.user;
    this.createdAt = Date.now();
    this.closedPromise = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (error) => this.onSocketError(error));
    socket.on("close", () => this.onSocketClose());
  }

  /**
   * Opens a socket, sends the StartupMessage, authenticates (trust, cleartext, MD5,
   * SCRAM-SHA-256) and waits for the first ReadyForQuery. Rejects with a PgError: 08001 naming
   * `host:port` when the server cannot be reached or the timeout passes, the server's own error
   * (28P01, 3D000, 53300...) when it refuses the login.
   */
  static async connect(options: ConnectOptions): Promise<BackendConnection> {
    const address = `${options.host}:${options.port}`;
    const abort = new AbortController();
    let socket: Socket | null = null;
    let connection: BackendConnection | null = null;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(backendConnectTimeout(address, options.connectTimeoutMs));
      }, options.connectTimeoutMs);
    });
    const attempt = async (): Promise<BackendConnection> => {
      const raw = await openSocket(options.host, options.port, address, abort.signal);
      socket = raw;
      const upgraded =
        options.upgrade === undefined ? raw : await options.upgrade(raw, { address, signal: abort.signal });
      socket = upgraded;
      if (abort.signal.aborted) throw backendConnectTimeout(address, options.connectTimeoutMs);
      connection = new BackendConnection(upgraded, options);
      await connection.start();
      return connection;
    };
    const attempted = attempt();
    attempted.catch(noop);
    try {
      return await Promise.race([attempted, timeout]);
    } catch (error) {
      // The race may have been lost by a socket that is still opening: nothing may leak.
      abort.abort();
      (connection as BackendConnection | null)?.destroy();
      (socket as Socket | null)?.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Where the connection stands. */
  get phase(): ConnectionPhase {
    return this.currentPhase;
  }

  /** Transaction status from the last ReadyForQuery: 'I' idle, 'T' in a block, 'E' failed block. */
  get txStatus(): TransactionStatus {
    return this.status;
  }

  /** ReadyForQuery messages received so far: tells whether `txStatus` is newer than a given moment. */
  get readyCount(): number {
    return this.readies;
  }

  /** The backend's process id (BackendKeyData), also what `pg_terminate_backend` takes. */
  get processId(): number {
    return this.pid;
  }

  /** The backend's cancel secret (a copy, 4 bytes under protocol 3.0). */
  get secretKey(): Buffer {
    return this.key;
  }

  /** True once the socket failed or closed without `close()`/`destroy()` being asked for. */
  get broken(): boolean {
    return this.currentPhase === ConnectionPhase.broken;
  }

  /** Why the connection broke (08006, or the server's FATAL error); null while healthy. */
  get brokenError(): PgError | null {
    return this.failure;
  }

  /** Settles once the socket closed, however that came about (close, destroy, a break). */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** Ready and not broken or closed. */
  get usable(): boolean {
    return this.currentPhase === ConnectionPhase.ready;
  }

  /**
   * True when the server has sent a ReadyForQuery for every Query, Sync and FunctionCall written
   * to it and no extended batch waits for its Sync: it waits for a new statement and no reply is
   * in flight. Counted per message, so the answer of a first statement does not make a
   * connection look at rest while a second still runs. Only such a connection can go back to a pool.
   */
  get isQuiescent(): boolean {
    return this.owedReady.atRest && this.currentPhase === ConnectionPhase.ready;
  }

  /** The reset the session needs before another client may use it (see `markDirty`). */
  get dirty(): ResetKind {
    return this.dirtyKind;
  }

  /**
   * Records that the session state changed: `settings` for SET/RESET-level changes that `RESET ALL`
   * undoes, `full` for anything else (prepared statements by SQL, LISTEN, temp tables, roles,
   * advisory locks). The stronger kind is kept.
   */
  markDirty(kind: ResetKind): void {
    this.dirtyKind = strongerReset(this.dirtyKind, kind);
  }

  /** Called by the pool once a reset succeeded. */
  markClean(kind: ResetKind): void {
    this.appliedSettings.clear();
    if (kind === ResetKind.full) this.preparedStatements.clear();
    this.dirtyKind = ResetKind.none;
  }

  /** Sets (or with null, removes) the receiver of backend messages. */
  setReceiver(receiver: FrameReceiver | null): void {
    this.receiver = receiver;
  }

  /** Subscribes to the connection breaking; returns the unsubscribe function. */
  onBroken(listener: (error: PgError) => void): () => void {
    this.brokenListeners.add(listener);
    return () => this.brokenListeners.delete(listener);
  }

  /**
   * Writes raw protocol bytes to the backend. Writes made in the same tick leave in one batch
   * (the socket is corked until the next tick). Returns false when the socket's buffer is over
   * its high-water mark (wait for `drained()` before writing much more). Throws 08003 on a closed
   * or broken connection.
   */
  write(data: Buffer | readonly Buffer[]): boolean {
    if (this.currentPhase !== ConnectionPhase.ready) {
      throw this.failure ?? connectionUnusable(this.address, `connection is ${this.currentPhase}`);
    }
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(BackendConnection.uncork, this);
    }
    if (Buffer.isBuffer(data)) {
      this.owedReady.wrote(data);
      return this.socket.write(data);
    }
    let ok = true;
    for (const chunk of data as readonly Buffer[]) {
      this.owedReady.wrote(chunk);
      ok = this.socket.write(chunk);
    }
    return ok;
  }

  /** Resolves when the socket's write buffer has drained (at once if it is not full). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.currentPhase !== ConnectionPhase.ready)
      return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off("drain", done);
        this.socket.off("close", done);
        resolve();
      };
      this.socket.on("drain", done);
      this.socket.on("close", done);
    });
  }

  /**
   * Stops reading from the backend (backpressure: the client's socket is full). Frames already
   * read stop being delivered at once, even within a chunk.
   */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  /** Resumes reading and delivers the frames held back by `pause()`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.currentPhase === ConnectionPhase.ready || this.currentPhase === ConnectionPhase.authenticating) {
      this.drain();
      if (!this.paused) this.socket.resume();
    }
  }

  /** True while paused. */
  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Runs an internal statement (reset, setting replay, probe) with the simple protocol and waits
   * for its ReadyForQuery. Rejects with the server's PgError on ErrorResponse (the connection
   * stays usable), with 08006 when the connection breaks, and on `timeoutMs` destroys the
   * connection (its state is unknown) and rejects with 57014. The owner's receiver is set aside
   * for the duration; calls are queued one after another. Refused with 55000 while a reply to
   * bytes the owner wrote is still in flight (see `isQuiescent`).
   */
  simpleQuery(
    sql: string,
    options: { readonly timeoutMs?: number | undefined } = {},
  ): Promise<SimpleQueryResult> {
    const run = this.queryChain.then(() => this.runSimpleQuery(sql, options.timeoutMs));
    this.queryChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Asks the server to cancel the statement running on this connection: a CancelRequest with this
   * connection's key, on a new socket. Resolves once the server closed that socket (it never
   * answers); whether anything was cancelled shows on this connection (57014).
   */
  async cancel(): Promise<void> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.options.connectTimeoutMs);
    try {
      let socket = await openSocket(this.host, this.port, this.address, abort.signal);
      if (this.options.upgrade !== undefined) {
        socket = await this.options.upgrade(socket, { address: this.address, signal: abort.signal });
      }
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          socket.destroy();
          resolve();
        };
        socket.once("close", done);
        socket.once("error", done);
        abort.signal.addEventListener("abort", done);
        socket.end(encodeCancelRequest({ processId: this.pid, secretKey: this.key }));
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends Terminate and waits for the server to close the socket (destroyed after 1 s). */
  async close(): Promise<void> {
    if (this.currentPhase === ConnectionPhase.closed || this.currentPhase === ConnectionPhase.broken) {
      this.socket.destroy();
      return this.closedPromise;
    }
    const wasReady = this.currentPhase === ConnectionPhase.ready;
    this.currentPhase = ConnectionPhase.closed;
    this.rejectPending(connectionUnusable(this.address, "connection closed"));
    if (wasReady && !this.socket.destroyed) this.socket.end(Messages.terminate);
    else this.socket.destroy();
    const timer = setTimeout(() => this.socket.destroy(), 1000);
    timer.unref();
    await this.closedPromise;
    clearTimeout(timer);
  }

  /**
   * Breaks the connection with `error`, as a failed socket would: whoever waits on it (its
   * receiver, `onBroken` listeners, a pending internal statement) learns why. Used when the backend
   * stopped answering while its socket stays open. No effect unless ready.
   */
  fail(error: PgError): void {
    this.breakWith(error);
  }

  /** Closes the socket at once, without Terminate. */
  destroy(): void {
    if (this.currentPhase !== ConnectionPhase.broken) this.currentPhase = ConnectionPhase.closed;
    this.rejectPending(connectionUnusable(this.address, "connection destroyed"));
    this.socket.destroy();
  }

  private static uncork(connection: BackendConnection): void {
    connection.corked = false;
    connection.socket.uncork();
  }

  private start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.socket.destroyed) {
        reject(backendConnectionLost(this.address));
        return;
      }
      this.startup = { resolve, reject, scram: null };
      const parameters: Record<string, string> = { ...(this.options.startupParams ?? {}) };
      parameters.user = this.options.user;
      parameters.database = this.options.database;
      if (this.options.applicationName !== undefined)
        parameters.application_name = this.options.applicationName;
      this.socket.write(encodeStartupMessage({ parameters }));
    });
  }

  private onData(chunk: Buffer): void {
    this.framer.push(chunk);
    if (!this.paused) this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.paused) {
        const frame = this.framer.next();
        if (frame === null) return;
        if (isProtocolFault(frame)) {
          this.breakWith(backendProtocolViolation(this.address, frame.message));
          return;
        }
        this.dispatch(frame);
        if (this.currentPhase === ConnectionPhase.closed || this.currentPhase === ConnectionPhase.broken)
          return;
      }
    } catch (error) {
      // A throwing receiver must cost one connection, not the process (this runs in a socket event).
      if (this.currentPhase === ConnectionPhase.authenticating)
        this.failStartup(receiverFailed(this.address, error));
      else this.breakWith(receiverFailed(this.address, error));
    } finally {
      this.draining = false;
    }
  }

  private dispatch(frame: Frame): void {
    switch (frame.code) {
      case BackendCode.ReadyForQuery: {
        const status = readyForQueryStatus(frame);
        if (status !== null) this.status = status;
        this.readies++;
        break;
      }
      case BackendCode.ParameterStatus: {
        const message = decodeParameterStatus(frame.payload);
        if (!isProtocolFault(message)) this.parameters.set(message.name, message.value);
        break;
      }
      case BackendCode.ErrorResponse:
        this.noteFatal(frame);
        break;
    }
    if (this.currentPhase === ConnectionPhase.authenticating) {
      this.onStartupFrame(frame);
      return;
    }
    if (frame.code === BackendCode.ReadyForQuery) this.owedReady.answered();
    const receiver = this.receiver;
    if (receiver !== null) receiver.onFrame(frame);
  }

  /** A FATAL error precedes the server closing the socket: it is the reason the connection broke. */
  private noteFatal(frame: Frame): void {
    const decoded = decodeErrorResponse(frame.payload);
    if (isProtocolFault(decoded)) return;
    const error = PgError.fromFields(decoded.fields);
    if (error.isFatal) this.fatal = error;
  }

  private onStartupFrame(frame: Frame): void {
    const startup = this.startup;
    if (startup === null) return;
    switch (frame.code) {
      case BackendCode.Authentication:
        this.onAuthentication(frame, startup);
        return;
      case BackendCode.BackendKeyData: {
        const message = decodeBackendKeyData(frame.payload);
        if (isProtocolFault(message)) {
          this.failStartup(backendProtocolViolation(this.address, message.message));
          return;
        }
        this.pid = message.processId;
        this.key = Buffer.from(message.secretKey);
        return;
      }
      case BackendCode.ErrorResponse: {
        const message = decodeErrorResponse(frame.payload);
        if (isProtocolFault(message)) {
          this.failStartup(backendProtocolViolation(this.address, message.message));
          return;
        }
        this.failStartup(PgError.fromFields(message.fields));
        return;
      }
      case BackendCode.ReadyForQuery:
        this.framer.setMaxLength(0x3fffffff);
        this.currentPhase = ConnectionPhase.ready;
        this.startup = null;
        startup.resolve();
        return;
      default:
        // ParameterStatus (recorded in dispatch), NoticeResponse, NegotiateProtocolVersion.
        return;
    }
  }

  private onAuthentication(
    frame: Frame,
    startup: { resolve: () => void; reject: (error: PgError) => void; scram: ScramClient | null },
  ): void {
    const message = decodeAuthentication(frame.payload);
    if (isProtocolFault(message)) {
      this.failStartup(backendProtocolViolation(this.address, message.message));
      return;
    }
    const { password, scramKeys, md5Hash, user } = this.options;
    switch (message.type) {
      case "AuthenticationOk":
        return;
      case "AuthenticationCleartextPassword":
        if (password === undefined) {
          this.failStartup(
            md5Hash !== undefined
              ? backendNeedsMoreThanMd5Hash(this.address, user, "password")
              : backendPasswordMissing(this.address, user, "password"),
          );
          return;
        }
        this.socket.write(encodePasswordMessage({ password }));
        return;
      case "AuthenticationMD5Password":
        if (password !== undefined) {
          this.socket.write(
            encodePasswordMessage({ password: md5PasswordHash(user, password, message.salt) }),
          );
          return;
        }
        // md5(password || user) is the stored hash itself: the answer needs nothing more.
        if (md5Hash !== undefined) {
          this.socket.write(encodePasswordMessage({ password: md5FromStored(md5Hash, message.salt) }));
          return;
        }
        this.failStartup(backendPasswordMissing(this.address, user, "md5"));
        return;
      case "AuthenticationSASL": {
        if (!message.mechanisms.includes(SCRAM_SHA_256)) {
          this.failStartup(
            backendAuthUnsupported(this.address, user, `SASL (${message.mechanisms.join(", ")})`),
          );
          return;
        }
        const credentials =
          password !== undefined ? { password } : scramKeys !== undefined ? scramKeys : null;
        if (credentials === null) {
          // A SCRAM proof needs the password or the ClientKey, neither of which an MD5 hash yields.
          this.failStartup(
            md5Hash !== undefined
              ? backendNeedsMoreThanMd5Hash(this.address, user, SCRAM_SHA_256)
              : backendPasswordMissing(this.address, user, SCRAM_SHA_256),
          );
          return;
        }
        const scram = new ScramClient(credentials);
        startup.scram = scram;
        this.socket.write(encodeSASLInitialResponse({ mechanism: SCRAM_SHA_256, data: scram.clientFirst() }));
        return;
      }
      case "AuthenticationSASLContinue": {
        if (startup.scram === null) {
          this.failStartup(backendProtocolViolation(this.address, "SASLContinue before SASL"));
          return;
        }
        const final = startup.scram.serverFirst(message.data);
        if (isScramFailure(final)) {
          this.failStartup(backendScramFailed(this.address, user, final.message));
          return;
        }
        this.socket.write(encodeSASLResponse({ data: final }));
        return;
      }
      case "AuthenticationSASLFinal": {
        if (startup.scram === null) {
          this.failStartup(backendProtocolViolation(this.address, "SASLFinal before SASL"));
          return;
        }
        const failure = startup.scram.serverFinal(message.data);
        if (failure !== null) {
          this.failStartup(backendScramFailed(this.address, user, failure.message));
        }
        return;
      }
      case "AuthenticationKerberosV5":
      case "AuthenticationGSS":
      case "AuthenticationGSSContinue":
      case "AuthenticationSSPI":
        this.failStartup(
          backendAuthUnsupported(this.address, user, message.type.slice("Authentication".length)),
        );
        return;
    }
  }

  private failStartup(error: PgError): void {
    const startup = this.startup;
    this.startup = null;
    this.currentPhase = ConnectionPhase.closed;
    this.socket.destroy();
    startup?.reject(error);
  }

  private runSimpleQuery(sql: string, timeoutMs: number | undefined): Promise<SimpleQueryResult> {
    if (this.currentPhase !== ConnectionPhase.ready) {
      return Promise.reject(
        this.failure ?? connectionUnusable(this.address, `connection is ${this.currentPhase}`),
      );
    }
    // Mixing our reply with the rest of the owner's would hand rows to the wrong reader.
    if (!this.owedReady.atRest) return Promise.reject(replyInFlight(this.address));
    return new Promise<SimpleQueryResult>((resolve, reject) => {
      const pending: PendingQuery = {
        resolve,
        reject,
        previousReceiver: this.receiver,
        fields: [],
        rows: [],
        tag: "",
        error: null,
        timer: null,
      };
      if (timeoutMs !== undefined) {
        pending.timer = setTimeout(() => {
          this.pending = null;
          this.receiver = pending.previousReceiver;
          this.destroy();
          reject(internalStatementTimeout(this.address, timeoutMs));
        }, timeoutMs);
      }
      this.pending = pending;
      this.receiver = { onFrame: (frame) => this.collect(frame, pending) };
      this.write(encodeQuery({ sql }));
    });
  }

  private collect(frame: Frame, pending: PendingQuery): void {
    switch (frame.code) {
      case BackendCode.RowDescription: {
        const message = decodeRowDescription(frame.payload);
        if (isProtocolFault(message)) {
          this.breakWith(backendProtocolViolation(this.address, message.message));
          return;
        }
        pending.fields = message.fields.map((field) => field.name);
        pending.rows = [];
        return;
      }
      case BackendCode.DataRow: {
        const message = decodeDataRow(frame.payload);
        if (isProtocolFault(message)) {
          this.breakWith(backendProtocolViolation(this.address, message.message));
          return;
        }
        pending.rows.push(message.values.map((value) => (value === null ? null : value.toString("utf8"))));
        return;
      }
      case BackendCode.CommandComplete: {
        const nul = frame.payload.indexOf(0);
        pending.tag = frame.payload.toString("latin1", 0, nul === -1 ? frame.payload.length : nul);
        return;
      }
      case BackendCode.ErrorResponse: {
        const message = decodeErrorResponse(frame.payload);
        if (pending.error === null && !isProtocolFault(message))
          pending.error = PgError.fromFields(message.fields);
        return;
      }
      case BackendCode.ReadyForQuery: {
        this.pending = null;
        this.receiver = pending.previousReceiver;
        if (pending.timer !== null) clearTimeout(pending.timer);
        if (pending.error !== null) pending.reject(pending.error);
        else pending.resolve({ fields: pending.fields, rows: pending.rows, tag: pending.tag });
        return;
      }
      case BackendCode.CopyInResponse:
        // An internal statement never feeds COPY data; refuse so the server returns to ready.
        this.socket.write(COPY_FAIL);
        return;
      default:
        return;
    }
  }

  private rejectPending(error: PgError): void {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    this.receiver = pending.previousReceiver;
    if (pending.timer !== null) clearTimeout(pending.timer);
    pending.reject(error);
  }

  private onSocketError(error: Error): void {
    if (this.currentPhase === ConnectionPhase.authenticating) {
      this.failStartup(backendConnectionLost(this.address, error));
      return;
    }
    this.breakWith(backendConnectionLost(this.address, this.fatal ?? error));
  }

  private onSocketClose(): void {
    if (this.currentPhase === ConnectionPhase.authenticating) {
      this.failStartup(this.fatal ?? backendConnectionLost(this.address));
      return;
    }
    this.breakWith(backendConnectionLost(this.address, this.fatal ?? undefined));
  }

  private breakWith(error: PgError): void {
    if (this.currentPhase !== ConnectionPhase.ready) return;
    this.currentPhase = ConnectionPhase.broken;
    this.failure = error;
    this.socket.destroy();
    this.rejectPending(error);
    this.receiver?.onBroken?.(error);
    for (const listener of this.brokenListeners) listener(error);
  }
}

const COPY_FAIL = encodeCopyFail({ message: "COPY FROM STDIN is not supported in internal statements" });

function noop(): void {}

function openSocket(host: string, port: number, address: string, signal: AbortSignal): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = netConnect({ host, port });
    socket.setNoDelay(true);
    const onAbort = (): void => {
      socket.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("connect", () => {
      signal.removeEventListener("abort", onAbort);
      socket.removeAllListeners("error");
      // Until the connection attaches its own handler, an error must not crash the process.
      socket.on("error", noop);
      resolve(socket);
    });
    socket.once("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(backendConnectFailed(address, error));
    });
  });
}
