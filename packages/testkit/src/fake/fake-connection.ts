import type { Socket } from "node:net";
import {
  type Bind,
  type Close,
  type Describe,
  decodeBind,
  decodeClose,
  decodeDescribe,
  decodeExecute,
  decodeParse,
  decodeQuery,
  decodeSASLInitialResponse,
  decodeSASLResponse,
  decodeStartupPacket,
  type Execute,
  FrontendCode,
  FrontendFramer,
  isProtocolFault,
  type Parse,
  PgError,
  type ProtocolFault,
  protocolViolation,
  SCRAM_SHA_256,
  type ScramFailure,
  ScramServer,
  type ScramVerifier,
  SqlState,
  STARTUP_FRAME_CODE,
  type StartupMessage,
  type TransactionStatus,
  Writer,
  writeAuthentication,
  writeBackendKeyData,
  writeBindComplete,
  writeCloseComplete,
  writeCommandComplete,
  writeDataRow,
  writeEmptyQueryResponse,
  writeErrorResponse,
  writeNegotiateProtocolVersion,
  writeNoData,
  writeNoticeResponse,
  writeNotificationResponse,
  writeParameterDescription,
  writeParameterStatus,
  writeParseComplete,
  writePortalSuspended,
  writeReadyForQuery,
  writeRowDescription,
} from "@geo/proto";
import { encodeCell, typeSize } from "./cell-encoding.js";
import { fakeErrors } from "./fake-errors.js";
import {
  columnOf,
  type FakeColumn,
  type FakeContext,
  type FakeParams,
  type FakeReply,
  type FakeValue,
} from "./script.js";
import { extraSettings, findSettingName, parseSet, reportedParameters } from "./session-parameters.js";
import { splitStatements } from "./split-statements.js";
import {
  allowedInFailedTransaction,
  type ClassifiedStatement,
  channelOf,
  classifyStatement,
  defaultTag,
  endsTransaction,
  notifyPayload,
  StatementKind,
} from "./statement-kind.js";

/** One statement as the fake received it, for assertions. */
export interface RecordedStatement {
  readonly connectionId: number;
  readonly sql: string;
  /** Parameters as UTF-8 text (null for SQL NULL). */
  readonly params: readonly (string | null)[];
  readonly rawParams: readonly (Buffer | null)[];
  readonly protocol: "simple" | "extended";
}

/** How clients must authenticate. */
export type FakeAuth =
  | { readonly method: "trust" }
  | { readonly method: "scram-sha-256"; readonly password: string };

/** What a connection needs from the backend that accepted it. */
export interface ConnectionHost {
  readonly auth: FakeAuth;
  /** Derived once from the SCRAM password: PBKDF2 is too slow to repeat per connection. */
  readonly scramVerifier: ScramVerifier | undefined;
  readonly parameterOverrides: Readonly<Record<string, string>>;
  readonly unknownStatements: "error" | "empty";
  readonly preparedTransactions: Set<string>;
  /** Session-level advisory locks taken with pg_try_advisory_lock(bigint): key to connection id. */
  readonly advisoryLocks: Map<string, number>;
  /** The scripted answer, else `fallback()` (the built-in answers), with injected failures applied. */
  resolve(sql: string, params: FakeParams, ctx: FakeContext, fallback: () => FakeReply): Promise<FakeReply>;
  record(statement: RecordedStatement): void;
  /** NOTIFY from a session: delivered to every session listening on the channel. */
  notify(channel: string, payload: string, senderProcessId: number): void;
  cancel(processId: number, secretKey: Buffer): void;
}

const ConnectionPhase = {
  startup: "startup",
  saslInitial: "sasl-initial",
  saslContinue: "sasl-continue",
  ready: "ready",
  closed: "closed",
} as const;
type ConnectionPhase = (typeof ConnectionPhase)[keyof typeof ConnectionPhase];

interface PreparedStatement {
  readonly sql: string;
  readonly paramTypes: readonly number[];
}

interface ResolvedReply {
  readonly columns: readonly Required<FakeColumn>[] | undefined;
  readonly rows: readonly (readonly FakeValue[])[];
  readonly tag: string | undefined;
  readonly error: PgError | undefined;
  readonly notices: readonly PgError[];
  readonly delayMs: number;
  readonly stall: boolean;
  readonly closeAfterRows: number | undefined;
  readonly vanish: boolean;
}

interface Portal {
  readonly sql: string;
  readonly params: readonly (Buffer | null)[];
  readonly resultFormats: readonly (0 | 1)[];
  reply: ResolvedReply | undefined;
  executed: boolean;
  completed: boolean;
  rowsSent: number;
}

type WaitOutcome = "elapsed" | "cancelled" | "closed";

const TEXT_OID = 25;
const INT4_OID = 23;
const OID_OID = 26;
const BOOL_OID = 16;
const INT8_OID = 20;
const ADVISORY_LOCK = /pg_try_advisory_lock(_shared)?\((-?\d+)\)\s+as\s+(\w+)/gi;
const SSL_REFUSED = Buffer.from("N");

function toPgError(error: NonNullable<FakeReply["error"]>): PgError {
  return error instanceof PgError ? error : new PgError(error);
}

function resolveReply(reply: FakeReply): ResolvedReply {
  return {
    columns: reply.columns?.map(columnOf),
    rows: reply.rows ?? [],
    tag: reply.tag,
    error: reply.error === undefined ? undefined : toPgError(reply.error),
    notices: (reply.notices ?? []).map((notice) =>
      notice instanceof PgError ? notice : new PgError({ ...notice, severity: notice.severity ?? "NOTICE" }),
    ),
    delayMs: reply.delayMs ?? 0,
    stall: reply.stall ?? false,
    closeAfterRows: reply.closeAfterRows,
    vanish: reply.vanish ?? false,
  };
}

function paramCount(sql: string, declared: readonly number[]): number {
  let highest = declared.length;
  for (const match of sql.matchAll(/\$(\d+)/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

/**
 * One client session on the fake backend: the protocol state machine (startup, SCRAM, simple and
 * extended query, transaction status) answering from the backend's script.
 */
export class FakeConnection {
  private userName = "";
  private databaseName = "";
  private startup: Readonly<Record<string, string>> = {};
  readonly statements: RecordedStatement[] = [];
  private phase: ConnectionPhase = ConnectionPhase.startup;
  private readonly framer = new FrontendFramer();
  private readonly out = new Writer(4096);
  private readonly queue: (Buffer | ProtocolFault)[] = [];
  private codes: number[] = [];
  private pumping = false;
  private status: TransactionStatus = "I";
  private discardUntilSync = false;
  private scram: ScramServer | undefined;
  private settings: Record<string, string> = {};
  private initialSettings: Record<string, string> = {};
  private readonly pendingReports = new Set<string>();
  private readonly prepared = new Map<string, PreparedStatement>();
  private readonly portals = new Map<string, Portal>();
  private waiting: ((outcome: WaitOutcome) => void) | undefined;
  private readonly listening = new Set<string>();
  private readonly pendingNotifications: { channel: string; payload: string; processId: number }[] = [];

  constructor(
    private readonly socket: Socket,
    private readonly host: ConnectionHost,
    readonly id: number,
    readonly processId: number,
    readonly secretKey: Buffer,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", () => {});
    socket.on("close", () => this.onSocketClosed());
  }

  /** The role from the StartupMessage. */
  get user(): string {
    return this.userName;
  }

  /** The database from the StartupMessage (the user name when absent, as PostgreSQL does). */
  get database(): string {
    return this.databaseName;
  }

  /** Every StartupMessage parameter (user, database, application_name, options...). */
  get startupParameters(): Readonly<Record<string, string>> {
    return this.startup;
  }

  get isOpen(): boolean {
    return this.phase !== ConnectionPhase.closed;
  }

  get transactionStatus(): TransactionStatus {
    return this.status;
  }

  /** Ends a pending delay or stall with 57014, as a CancelRequest does to a running query. */
  cancel(): void {
    this.waiting?.("cancelled");
  }

  /** Closes the socket; with `fatal`, first sends the FATAL error a server shutdown sends (57P01). */
  terminate(fatal?: PgError): void {
    if (!this.isOpen) return;
    if (fatal !== undefined) writeErrorResponse(this.out, fatal);
    this.hangUp();
  }

  private receive(chunk: Buffer): void {
    if (!this.isOpen) return;
    this.framer.push(chunk);
    for (let frame = this.framer.next(); frame !== null; frame = this.framer.next()) {
      if (isProtocolFault(frame)) {
        this.queue.push(frame);
        this.codes.push(-1);
        break;
      }
      // Frames are views into socket chunks; processing is asynchronous, so keep copies.
      this.queue.push(Buffer.from(frame.payload));
      this.codes.push(frame.code);
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && this.isOpen) {
        const item = this.queue.shift()!;
        const code = this.codes.shift()!;
        if (isProtocolFault(item)) {
          this.fatal(protocolViolation(item));
          break;
        }
        await this.handle(code, item);
      }
      this.flush();
    } finally {
      this.pumping = false;
    }
  }

  private flush(): void {
    if (this.out.length === 0 || this.socket.destroyed) {
      this.out.reset();
      return;
    }
    this.socket.write(this.out.flush());
  }

  private hangUp(): void {
    this.releaseAdvisoryLocks();
    this.flush();
    this.phase = ConnectionPhase.closed;
    this.queue.length = 0;
    this.codes = [];
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 200).unref();
    this.waiting?.("closed");
  }

  private fatal(error: PgError): void {
    writeErrorResponse(this.out, error);
    this.hangUp();
  }

  private onSocketClosed(): void {
    this.releaseAdvisoryLocks();
    this.phase = ConnectionPhase.closed;
    this.waiting?.("closed");
  }

  private async handle(code: number, payload: Buffer): Promise<void> {
    switch (this.phase) {
      case ConnectionPhase.startup:
        return this.handleStartup(code, payload);
      case ConnectionPhase.saslInitial:
      case ConnectionPhase.saslContinue:
        return this.handleSasl(code, payload);
      case ConnectionPhase.ready:
        return this.handleReady(code, payload);
      case ConnectionPhase.closed:
        return;
      default:
        return assertNever(this.phase);
    }
  }

  private handleStartup(code: number, payload: Buffer): void {
    if (code !== STARTUP_FRAME_CODE) {
      this.fatal(fakeErrors.expectedStartupPacket());
      return;
    }
    const packet = decodeStartupPacket(payload);
    if (isProtocolFault(packet)) {
      this.fatal(protocolViolation(packet));
      return;
    }
    switch (packet.type) {
      case "SSLRequest":
      case "GSSENCRequest":
        // 'N': no encryption; the client continues in clear with a StartupMessage.
        this.out.bytes(SSL_REFUSED);
        this.flush();
        return;
      case "CancelRequest":
        this.host.cancel(packet.processId, packet.secretKey);
        this.hangUp();
        return;
      case "StartupMessage":
        this.startSession(packet);
        return;
      default:
        assertNever(packet);
    }
  }

  private startSession(startup: StartupMessage): void {
    if (startup.protocolVersion >>> 16 !== 3) {
      this.fatal(
        fakeErrors.unsupportedProtocol(startup.protocolVersion >>> 16, startup.protocolVersion & 0xffff),
      );
      return;
    }
    const user = startup.parameters["user"];
    if (user === undefined || user === "") {
      this.fatal(fakeErrors.noUserName());
      return;
    }
    this.startup = { ...startup.parameters };
    this.userName = user;
    this.databaseName = startup.parameters["database"] || user;
    this.settings = {
      ...reportedParameters(user, startup.parameters["application_name"] ?? ""),
      ...extraSettings,
      ...this.host.parameterOverrides,
    };
    this.initialSettings = { ...this.settings };
    const minor = startup.protocolVersion & 0xffff;
    const unrecognizedOptions = Object.keys(startup.parameters).filter((name) => name.startsWith("_pq_."));
    // PostgreSQL 15 speaks 3.0 only: it answers a newer minor or protocol options with the version it takes.
    if (minor > 0 || unrecognizedOptions.length > 0) {
      writeNegotiateProtocolVersion(this.out, { newestMinor: 0, unrecognizedOptions });
    }
    const auth = this.host.auth;
    switch (auth.method) {
      case "trust":
        this.completeAuthentication();
        return;
      case "scram-sha-256":
        this.scram = new ScramServer(this.host.scramVerifier!);
        writeAuthentication(this.out, { type: "AuthenticationSASL", mechanisms: [SCRAM_SHA_256] });
        this.phase = ConnectionPhase.saslInitial;
        this.flush();
        return;
      default:
        assertNever(auth);
    }
  }

  private authenticationFailed(failure: ScramFailure): void {
    this.fatal(
      failure.code === SqlState.invalid_password
        ? fakeErrors.passwordFailed(this.user)
        : new PgError({ code: failure.code, severity: "FATAL", message: failure.message }),
    );
  }

  private handleSasl(code: number, payload: Buffer): void {
    if (code !== FrontendCode.AuthenticationResponse || this.scram === undefined) {
      this.fatal(fakeErrors.expectedSaslResponse());
      return;
    }
    if (this.phase === ConnectionPhase.saslInitial) {
      const initial = decodeSASLInitialResponse(payload);
      if (isProtocolFault(initial)) {
        this.fatal(protocolViolation(initial));
        return;
      }
      if (initial.mechanism !== SCRAM_SHA_256 || initial.data === null) {
        this.fatal(fakeErrors.invalidSaslMechanism());
        return;
      }
      const serverFirst = this.scram.clientFirst(initial.data);
      if (!serverFirst.ok) {
        this.authenticationFailed(serverFirst.failure);
        return;
      }
      writeAuthentication(this.out, { type: "AuthenticationSASLContinue", data: serverFirst.message });
      this.phase = ConnectionPhase.saslContinue;
      this.flush();
      return;
    }
    const response = decodeSASLResponse(payload);
    if (isProtocolFault(response)) {
      this.fatal(protocolViolation(response));
      return;
    }
    const serverFinal = this.scram.clientFinal(response.data);
    if (!serverFinal.ok) {
      this.authenticationFailed(serverFinal.failure);
      return;
    }
    writeAuthentication(this.out, { type: "AuthenticationSASLFinal", data: serverFinal.message });
    this.completeAuthentication();
  }

  private completeAuthentication(): void {
    writeAuthentication(this.out, { type: "AuthenticationOk" });
    for (const [name, value] of Object.entries(reportedParameters(this.user, ""))) {
      const actual = this.settings[name] ?? value;
      writeParameterStatus(this.out, { name, value: actual });
    }
    writeBackendKeyData(this.out, { processId: this.processId, secretKey: this.secretKey });
    writeReadyForQuery(this.out, { status: "I" });
    this.framer.markAuthenticated();
    this.phase = ConnectionPhase.ready;
    this.flush();
  }

  private async handleReady(code: number, payload: Buffer): Promise<void> {
    if (code === FrontendCode.Terminate) {
      this.hangUp();
      return;
    }
    if (code === FrontendCode.Sync) {
      this.sync();
      return;
    }
    // After an error in the extended protocol the server skips everything up to the next Sync.
    if (this.discardUntilSync) return;
    switch (code) {
      case FrontendCode.Query:
        return this.simpleQuery(payload);
      case FrontendCode.Parse:
        return this.decoded(decodeParse(payload), (message) => this.parse(message));
      case FrontendCode.Bind:
        return this.decoded(decodeBind(payload), (message) => this.bind(message));
      case FrontendCode.Describe:
        return this.decoded(decodeDescribe(payload), (message) => this.describe(message));
      case FrontendCode.Execute:
        return this.decoded(decodeExecute(payload), (message) => this.execute(message));
      case FrontendCode.Close:
        return this.decoded(decodeClose(payload), (message) => this.close(message));
      case FrontendCode.Flush:
        this.flush();
        return;
      case FrontendCode.CopyData:
      case FrontendCode.CopyDone:
      case FrontendCode.CopyFail:
        return;
      case FrontendCode.FunctionCall:
        this.extendedError(fakeErrors.functionCallUnsupported());
        return;
      default:
        this.fatal(fakeErrors.invalidFrontendMessage(code));
    }
  }

  private async decoded<T>(
    message: T | ProtocolFault,
    act: (message: T) => void | Promise<void>,
  ): Promise<void> {
    if (isProtocolFault(message)) {
      this.fatal(protocolViolation(message));
      return;
    }
    await act(message);
  }

  private context(
    protocol: "simple" | "extended",
    phase: "describe" | "execute",
    params: FakeParams,
  ): FakeContext {
    return {
      connectionId: this.id,
      user: this.user,
      database: this.database,
      protocol,
      phase,
      transactionStatus: this.status,
      text: (index) => params[index]?.toString("utf8") ?? null,
      preparedTransactions: this.host.preparedTransactions,
    };
  }

  private record(sql: string, params: FakeParams, protocol: "simple" | "extended"): void {
    const statement: RecordedStatement = {
      connectionId: this.id,
      sql,
      params: params.map((value) => (value === null ? null : value.toString("utf8"))),
      rawParams: params.map((value) => (value === null ? null : Buffer.from(value))),
      protocol,
    };
    this.statements.push(statement);
    this.host.record(statement);
  }

  private async resolve(
    sql: string,
    classified: ClassifiedStatement,
    params: FakeParams,
    protocol: "simple" | "extended",
    phase: "describe" | "execute",
  ): Promise<ResolvedReply> {
    if (this.status === "E" && !allowedInFailedTransaction(classified.kind)) {
      return resolveReply({ error: fakeErrors.inFailedTransaction() });
    }
    try {
      const ctx = this.context(protocol, phase, params);
      return resolveReply(await this.host.resolve(sql, params, ctx, () => this.defaultReply(classified)));
    } catch (error) {
      return resolveReply({ error: fakeErrors.scriptFailed(error) });
    }
  }

  private defaultReply(statement: ClassifiedStatement): FakeReply {
    const { kind, normalized, gid } = statement;
    const prepared = this.host.preparedTransactions;
    switch (kind) {
      case StatementKind.begin:
      case StatementKind.commit:
      case StatementKind.rollback:
      case StatementKind.savepoint:
      case StatementKind.release:
      case StatementKind.rollbackTo:
      case StatementKind.set:
      case StatementKind.reset:
      case StatementKind.discard:
      case StatementKind.listen:
      case StatementKind.unlisten:
      case StatementKind.notify:
        return {};
      case StatementKind.prepareTransaction:
        if (gid === undefined) return { error: fakeErrors.syntaxError(normalized) };
        return prepared.has(gid) ? { error: fakeErrors.gidInUse(gid) } : {};
      case StatementKind.commitPrepared:
      case StatementKind.rollbackPrepared:
        if (gid === undefined) return { error: fakeErrors.syntaxError(normalized) };
        if (this.status !== "I") {
          return {
            error: fakeErrors.preparedInsideBlock(
              kind === StatementKind.commitPrepared ? "COMMIT" : "ROLLBACK",
            ),
          };
        }
        return prepared.has(gid) ? {} : { error: fakeErrors.gidUnknown(gid) };
      case StatementKind.show: {
        const name = normalized.replace(/^SHOW\s+/i, "");
        const key = findSettingName(this.settings, name);
        if (key === undefined) return { error: fakeErrors.unknownSetting(name) };
        return { columns: [name.toLowerCase()], rows: [[this.settings[key]!]], tag: "SHOW" };
      }
      case StatementKind.other:
        return this.defaultQueryReply(normalized);
      default:
        return assertNever(kind);
    }
  }

  private defaultQueryReply(normalized: string): FakeReply {
    if (/^select 1$/i.test(normalized))
      return { columns: [{ name: "?column?", typeOid: INT4_OID }], rows: [[1]] };
    // postgres.js asks for the array types once per connection; no custom types here.
    if (/^select b\.oid, b\.typarray from pg_catalog\.pg_type a/i.test(normalized)) {
      return {
        columns: [
          { name: "oid", typeOid: OID_OID },
          { name: "typarray", typeOid: OID_OID },
        ],
        rows: [],
      };
    }
    if (/^select gid from pg_(catalog\.)?prepared_xacts$/i.test(normalized)) {
      return { columns: ["gid"], rows: [...this.host.preparedTransactions].map((gid) => [gid]) };
    }
    const advisory = this.advisoryReply(normalized);
    if (advisory !== undefined) return advisory;
    if (this.host.unknownStatements === "empty") return {};
    return { error: fakeErrors.noAnswer(normalized) };
  }

  /**
   * Session-level advisory locks, as PostgreSQL keeps them: pg_try_advisory_lock(bigint) grants a
   * key no other session holds, and a session's locks go when it ends. pg_locks is answered for the
   * asking session's own locks only (other sessions' holders are not shown).
   */
  private advisoryReply(normalized: string): FakeReply | undefined {
    const locks = this.host.advisoryLocks;
    const taken = [...normalized.matchAll(ADVISORY_LOCK)];
    if (taken.length > 0 && /^select /i.test(normalized)) {
      // A shared lock is kept as `<key>/shared/<connection id>`: granted unless another session
      // holds the key exclusively; an exclusive one needs no other session's lock of either kind.
      const sharedBy = (key: string) =>
        [...locks.keys()].filter((k) => k.startsWith(`${key}/shared/`)).map((k) => locks.get(k)!);
      const granted = taken.map(([, shared, key]) => {
        const holder = locks.get(key!);
        if (holder !== undefined && holder !== this.id) return false;
        if (shared !== undefined) {
          locks.set(`${key}/shared/${this.id}`, this.id);
          return true;
        }
        if (sharedBy(key!).some((id) => id !== this.id)) return false;
        locks.set(key!, this.id);
        return true;
      });
      return {
        columns: taken.map(([, , , name]) => ({ name: name!.toLowerCase(), typeOid: BOOL_OID })),
        rows: [granted],
      };
    }
    if (!/ from pg_catalog\.pg_locks /i.test(normalized)) return undefined;
    if (
      /^select count\(\*\) as (\w+) /i.test(normalized) &&
      normalized.includes("= pg_catalog.pg_backend_pid()")
    ) {
      const name = /^select count\(\*\) as (\w+) /i.exec(normalized)![1]!;
      const held = [...locks.values()].filter((id) => id === this.id).length;
      return { columns: [{ name, typeOid: INT8_OID }], rows: [[held]] };
    }
    return { columns: ["pid", "application_name", "client_address"], rows: [] };
  }

  private releaseAdvisoryLocks(): void {
    const locks = this.host.advisoryLocks;
    for (const [key, id] of locks) if (id === this.id) locks.delete(key);
  }

  /** Waits `ms` (undefined: forever) unless a CancelRequest or a closed socket ends the wait first. */
  private wait(ms: number | undefined): Promise<WaitOutcome> {
    this.flush();
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => finish("elapsed"), ms);
      const finish = (outcome: WaitOutcome) => {
        if (timer !== undefined) clearTimeout(timer);
        this.waiting = undefined;
        resolve(outcome);
      };
      this.waiting = finish;
    });
  }

  /**
   * Runs the timing and failure parts of a reply. Returns the reply to send, or undefined when the
   * connection is gone (closed by the client, by the script, or vanished).
   */
  private async perform(
    reply: ResolvedReply,
    statement: ClassifiedStatement,
  ): Promise<ResolvedReply | undefined> {
    if (reply.stall || reply.delayMs > 0) {
      const outcome = await this.wait(reply.stall ? undefined : reply.delayMs);
      if (outcome === "closed") return undefined;
      if (outcome === "cancelled") {
        return resolveReply({ error: fakeErrors.queryCanceled() });
      }
    }
    if (reply.vanish) {
      if (reply.error === undefined) this.applyEffects(statement);
      this.hangUp();
      return undefined;
    }
    return reply;
  }

  /** Session and transaction effects of a statement that succeeded. */
  private applyEffects(statement: ClassifiedStatement): void {
    const { kind, gid, normalized } = statement;
    switch (kind) {
      case StatementKind.begin:
        if (this.status === "I") this.status = "T";
        return;
      case StatementKind.commit:
      case StatementKind.rollback:
        this.status = "I";
        return;
      case StatementKind.prepareTransaction:
        if (this.status !== "E" && gid !== undefined) this.host.preparedTransactions.add(gid);
        this.status = "I";
        return;
      case StatementKind.commitPrepared:
      case StatementKind.rollbackPrepared:
        if (gid !== undefined) this.host.preparedTransactions.delete(gid);
        return;
      case StatementKind.rollbackTo:
        if (this.status === "E") this.status = "T";
        return;
      case StatementKind.set: {
        const assignment = parseSet(normalized);
        if (assignment !== undefined) this.changeSetting(assignment.name, assignment.value);
        return;
      }
      case StatementKind.reset: {
        const name = normalized.replace(/^RESET\s+/i, "");
        if (/^all$/i.test(name)) this.resetAllSettings();
        else {
          const key = findSettingName(this.initialSettings, name);
          if (key !== undefined) this.changeSetting(key, this.initialSettings[key]!);
        }
        return;
      }
      case StatementKind.discard:
        if (/^discard all$/i.test(normalized)) {
          this.resetAllSettings();
          this.prepared.clear();
          this.listening.clear();
        }
        return;
      case StatementKind.listen: {
        const channel = channelOf(normalized);
        if (channel !== undefined) this.listening.add(channel);
        return;
      }
      case StatementKind.unlisten: {
        const channel = channelOf(normalized);
        if (channel === "*") this.listening.clear();
        else if (channel !== undefined) this.listening.delete(channel);
        return;
      }
      case StatementKind.notify: {
        const channel = channelOf(normalized);
        if (channel !== undefined) this.host.notify(channel, notifyPayload(normalized), this.processId);
        return;
      }
      case StatementKind.savepoint:
      case StatementKind.release:
      case StatementKind.show:
      case StatementKind.other:
        return;
      default:
        assertNever(kind);
    }
  }

  private changeSetting(name: string, value: string): void {
    const key = findSettingName(this.settings, name) ?? name;
    this.settings[key] = value;
    if (Object.hasOwn(this.initialReported(), key)) this.pendingReports.add(key);
  }

  private resetAllSettings(): void {
    for (const [key, value] of Object.entries(this.initialSettings)) {
      if (this.settings[key] !== value) this.changeSetting(key, value);
    }
  }

  private initialReported(): Record<string, string> {
    return reportedParameters(this.user, "");
  }

  private failed(statement: ClassifiedStatement): void {
    if (this.status === "I") return;
    this.status = endsTransaction(statement.kind) ? "I" : "E";
  }

  private completionTag(reply: ResolvedReply, statement: ClassifiedStatement, rowCount: number): string {
    if (reply.tag !== undefined) return reply.tag;
    const aborted = this.status === "E";
    if (
      aborted &&
      (statement.kind === StatementKind.commit || statement.kind === StatementKind.prepareTransaction)
    ) {
      return "ROLLBACK";
    }
    return defaultTag(statement.normalized, rowCount, reply.columns !== undefined);
  }

  private writeError(error: PgError): void {
    writeErrorResponse(this.out, error);
    if (error.isFatal) this.hangUp();
  }

  private writeRowDescription(columns: readonly Required<FakeColumn>[], formats: readonly (0 | 1)[]): void {
    writeRowDescription(this.out, {
      fields: columns.map((column, index) => ({
        name: column.name,
        tableOid: 0,
        columnAttr: 0,
        typeOid: column.typeOid,
        typeSize: typeSize(column.typeOid),
        typeModifier: -1,
        format: formatFor(formats, index),
      })),
    });
  }

  /** Writes rows [from, to); false when the script closed the connection mid-result. */
  private writeRows(
    reply: ResolvedReply,
    formats: readonly (0 | 1)[],
    from: number,
    to: number,
  ): boolean | PgError {
    const columns = reply.columns ?? [];
    for (let index = from; index < to; index++) {
      if (reply.closeAfterRows !== undefined && index >= reply.closeAfterRows) {
        this.hangUp();
        return false;
      }
      const row = reply.rows[index]!;
      try {
        writeDataRow(this.out, {
          values: row.map((value, column) =>
            encodeCell(value, columns[column]?.typeOid ?? TEXT_OID, formatFor(formats, column)),
          ),
        });
      } catch (error) {
        return fakeErrors.cannotEncode(error);
      }
    }
    if (reply.closeAfterRows !== undefined && to >= reply.closeAfterRows && to === reply.rows.length) {
      this.hangUp();
      return false;
    }
    return true;
  }

  private reportChangedSettings(): void {
    for (const name of this.pendingReports)
      writeParameterStatus(this.out, { name, value: this.settings[name] ?? "" });
    this.pendingReports.clear();
  }

  /** Channels this session listens on. */
  get channels(): ReadonlySet<string> {
    return this.listening;
  }

  /** Queues a notification if this session listens on the channel; an idle session gets it at once. */
  deliver(channel: string, payload: string, processId: number): void {
    if (!this.listening.has(channel) || !this.isOpen) return;
    this.pendingNotifications.push({ channel, payload, processId });
    if (!this.pumping && this.status === "I" && this.phase === ConnectionPhase.ready) {
      this.writeNotifications();
      this.flush();
    }
  }

  private writeNotifications(): void {
    for (const notification of this.pendingNotifications.splice(0))
      writeNotificationResponse(this.out, notification);
  }

  private writeNotices(reply: ResolvedReply): void {
    for (const notice of reply.notices) writeNoticeResponse(this.out, notice);
  }

  private readyForQuery(): void {
    this.reportChangedSettings();
    // Like PostgreSQL, notifications reach a session between transactions, never inside one.
    if (this.status === "I") this.writeNotifications();
    writeReadyForQuery(this.out, { status: this.status });
    this.flush();
  }

  private async simpleQuery(payload: Buffer): Promise<void> {
    const query = decodeQuery(payload);
    if (isProtocolFault(query)) {
      this.fatal(protocolViolation(query));
      return;
    }
    // A simple Query destroys the unnamed statement and portal.
    this.prepared.delete("");
    this.portals.delete("");
    const statements = splitStatements(query.sql);
    if (statements.length === 0) writeEmptyQueryResponse(this.out);
    for (const sql of statements) {
      const classified = classifyStatement(sql);
      this.record(sql, [], "simple");
      const resolved = await this.resolve(sql, classified, [], "simple", "execute");
      const reply = await this.perform(resolved, classified);
      if (reply === undefined) return;
      if (reply.error !== undefined) {
        this.failed(classified);
        this.writeError(reply.error);
        if (!this.isOpen) return;
        break;
      }
      this.writeNotices(reply);
      if (reply.columns !== undefined) this.writeRowDescription(reply.columns, []);
      const written = this.writeRows(reply, [], 0, reply.rows.length);
      if (written === false) return;
      if (written instanceof PgError) {
        this.failed(classified);
        this.writeError(written);
        break;
      }
      const tag = this.completionTag(reply, classified, reply.rows.length);
      this.applyEffects(classified);
      writeCommandComplete(this.out, { tag });
    }
    this.readyForQuery();
  }

  private extendedError(error: PgError, statement?: ClassifiedStatement): void {
    if (statement !== undefined) this.failed(statement);
    else if (this.status === "T") this.status = "E";
    this.writeError(error);
    this.discardUntilSync = true;
  }

  private sync(): void {
    this.discardUntilSync = false;
    // Outside a transaction block, Sync ends the implicit transaction and its portals.
    if (this.status === "I") this.portals.clear();
    this.readyForQuery();
  }

  private parse(message: Parse): void {
    if (message.name !== "" && this.prepared.has(message.name)) {
      this.extendedError(fakeErrors.duplicateStatement(message.name));
      return;
    }
    this.prepared.set(message.name, { sql: message.sql, paramTypes: message.paramTypes });
    writeParseComplete(this.out);
  }

  private bind(message: Bind): void {
    const statement = this.prepared.get(message.statement);
    if (statement === undefined) {
      this.extendedError(fakeErrors.unknownStatement(message.statement));
      return;
    }
    if (message.portal !== "" && this.portals.has(message.portal)) {
      this.extendedError(fakeErrors.duplicatePortal(message.portal));
      return;
    }
    this.portals.set(message.portal, {
      sql: statement.sql,
      params: message.params.map((value) => (value === null ? null : Buffer.from(value))),
      resultFormats: message.resultFormats,
      reply: undefined,
      executed: false,
      completed: false,
      rowsSent: 0,
    });
    writeBindComplete(this.out);
  }

  private async describe(message: Describe): Promise<void> {
    if (message.target === "S") {
      const statement = this.prepared.get(message.name);
      if (statement === undefined) {
        this.extendedError(fakeErrors.unknownStatement(message.name));
        return;
      }
      const count = paramCount(statement.sql, statement.paramTypes);
      const typeOids = Array.from({ length: count }, (_, index) => statement.paramTypes[index] || TEXT_OID);
      writeParameterDescription(this.out, { typeOids });
      const params = Array.from({ length: count }, () => null);
      const classified = classifyStatement(statement.sql);
      const reply = await this.resolve(statement.sql, classified, params, "extended", "describe");
      if (reply.columns === undefined) writeNoData(this.out);
      else this.writeRowDescription(reply.columns, []);
      return;
    }
    const portal = this.portals.get(message.name);
    if (portal === undefined) {
      this.extendedError(fakeErrors.unknownPortal(message.name));
      return;
    }
    portal.reply ??= await this.resolvePortal(portal);
    if (portal.reply.columns === undefined) writeNoData(this.out);
    else this.writeRowDescription(portal.reply.columns, portal.resultFormats);
  }

  private async resolvePortal(portal: Portal): Promise<ResolvedReply> {
    this.record(portal.sql, portal.params, "extended");
    return this.resolve(portal.sql, classifyStatement(portal.sql), portal.params, "extended", "execute");
  }

  private async execute(message: Execute): Promise<void> {
    const portal = this.portals.get(message.portal);
    if (portal === undefined) {
      this.extendedError(fakeErrors.unknownPortal(message.portal));
      return;
    }
    const classified = classifyStatement(portal.sql);
    if (classified.normalized === "") {
      writeEmptyQueryResponse(this.out);
      return;
    }
    portal.reply ??= await this.resolvePortal(portal);
    let reply: ResolvedReply | undefined = portal.reply;
    if (!portal.executed) {
      portal.executed = true;
      reply = await this.perform(reply, classified);
      if (reply === undefined) return;
      portal.reply = reply;
      this.writeNotices(reply);
      if (reply.error !== undefined) {
        this.extendedError(reply.error, classified);
        return;
      }
    }
    const from = portal.rowsSent;
    const to = message.maxRows > 0 ? Math.min(reply.rows.length, from + message.maxRows) : reply.rows.length;
    const written = this.writeRows(reply, portal.resultFormats, from, to);
    if (written === false) return;
    if (written instanceof PgError) {
      this.extendedError(written, classified);
      return;
    }
    portal.rowsSent = to;
    if (to < reply.rows.length) {
      writePortalSuspended(this.out);
      return;
    }
    // PostgreSQL counts the rows of this Execute only, not of the whole portal.
    const tag = this.completionTag(reply, classified, to - from);
    if (!portal.completed) this.applyEffects(classified);
    portal.completed = true;
    writeCommandComplete(this.out, { tag });
  }

  private close(message: Close): void {
    if (message.target === "S") this.prepared.delete(message.name);
    else this.portals.delete(message.name);
    writeCloseComplete(this.out);
  }
}

function formatFor(formats: readonly (0 | 1)[], index: number): 0 | 1 {
  if (formats.length === 0) return 0;
  return (formats.length === 1 ? formats[0] : formats[index]) ?? 0;
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}
