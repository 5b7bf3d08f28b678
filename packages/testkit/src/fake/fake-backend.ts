import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { makeScramVerifier, PgError, type PgErrorInit, type SqlStateCode } from "@geo/proto";
import {
  type ConnectionHost,
  type FakeAuth,
  FakeConnection,
  type RecordedStatement,
} from "./fake-connection.js";
import { fakeErrors } from "./fake-errors.js";
import {
  type FakeContext,
  type FakeHandler,
  type FakeParams,
  type FakeReply,
  type FakeRule,
  matches,
  type StatementMatcher,
} from "./script.js";
import { classifyStatement, StatementKind } from "./statement-kind.js";

/** Failures the fake produces on purpose, applied on top of whatever the script answers. */
export interface FakeFailures {
  /**
   * Answer PREPARE TRANSACTION with an error: `true` gives what a server with
   * max_prepared_transactions = 0 says (55000), a SQLSTATE or full error fields give that error.
   */
  readonly refusePrepareTransaction?: true | SqlStateCode | PgErrorInit;
  /** PREPARE TRANSACTION takes effect (the gid is recorded) but the connection closes before the answer. */
  readonly dropAfterPrepareTransaction?: boolean;
  /** Never answer matching statements (a CancelRequest ends the stall with 57014). */
  readonly stallOn?: StatementMatcher | readonly StatementMatcher[];
  /** Send this many DataRows of a matching statement's result, then close the connection. */
  readonly closeMidResult?: { readonly match: StatementMatcher; readonly afterRows: number };
}

export interface FakeBackendOptions {
  /** `{ method: "trust" }` (default) or `{ method: "scram-sha-256", password }` for every user. */
  readonly auth?: FakeAuth;
  /** Tried in order; the first matching rule answers. */
  readonly rules?: readonly FakeRule[];
  /** Asked after the rules; return undefined to fall through to the built-in answers. */
  readonly handler?: FakeHandler;
  readonly failures?: FakeFailures;
  /** Overrides or adds settings (ParameterStatus at startup for reported ones, SHOW for all). */
  readonly parameters?: Readonly<Record<string, string>>;
  /** Statements nothing answers: "error" (default, 0A000 with a hint) or "empty" (no rows). */
  readonly unknownStatements?: "error" | "empty";
}

interface LiveRule {
  readonly rule: FakeRule;
  remaining: number;
}

interface Waiter {
  readonly matcher: StatementMatcher;
  readonly resolve: (statement: RecordedStatement) => void;
}

function refusal(option: true | SqlStateCode | PgErrorInit): PgError {
  if (option === true) return fakeErrors.preparedTransactionsDisabled();
  if (typeof option === "string") return fakeErrors.prepareRefused(option);
  return new PgError(option);
}

function asList(
  matchers: StatementMatcher | readonly StatementMatcher[] | undefined,
): readonly StatementMatcher[] {
  if (matchers === undefined) return [];
  return Array.isArray(matchers) ? matchers : [matchers as StatementMatcher];
}

/**
 * An in-process PostgreSQL server on 127.0.0.1 (a free port) that speaks protocol 3.0 to real drivers
 * and answers from a script: rules, a handler, then built-in answers for transaction control, SET,
 * SHOW, DISCARD ALL, SELECT 1 and two-phase commit. It records every statement and fails on purpose.
 *
 * @example
 * await using fake = await FakeBackend.start({
 *   rules: [{ match: /from users/i, reply: { columns: ["id", "name"], rows: [[1, "ada"]] } }],
 *   failures: { refusePrepareTransaction: true },
 * });
 * const sql = postgres(fake.url());
 */
export class FakeBackend implements AsyncDisposable {
  readonly host = "127.0.0.1";
  /** Every statement received, on every connection, in arrival order. */
  readonly statements: RecordedStatement[] = [];
  /** Gids of transactions prepared here and not yet committed or rolled back. */
  readonly preparedTransactions = new Set<string>();
  /** Session-level advisory locks held here (pg_try_advisory_lock): key to connection id. */
  readonly advisoryLocks = new Map<string, number>();
  private readonly allConnections: FakeConnection[] = [];
  private readonly sockets = new Set<Socket>();
  private rules: LiveRule[] = [];
  private failures: FakeFailures[] = [];
  private readonly waiters = new Set<Waiter>();
  private nextConnectionId = 1;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly options: FakeBackendOptions,
    private readonly connectionHost: ConnectionHost,
  ) {}

  /** Starts listening on 127.0.0.1 with a port chosen by the kernel. */
  static async start(options: FakeBackendOptions = {}): Promise<FakeBackend> {
    const auth = options.auth ?? { method: "trust" };
    const scramVerifier = auth.method === "scram-sha-256" ? makeScramVerifier(auth.password) : undefined;
    let backend: FakeBackend | undefined;
    const host: ConnectionHost = {
      auth,
      scramVerifier,
      parameterOverrides: options.parameters ?? {},
      unknownStatements: options.unknownStatements ?? "error",
      get preparedTransactions() {
        return backend!.preparedTransactions;
      },
      get advisoryLocks() {
        return backend!.advisoryLocks;
      },
      resolve: (sql, params, ctx, fallback) => backend!.resolve(sql, params, ctx, fallback),
      record: (statement) => backend!.record(statement),
      cancel: (processId, secretKey) => backend!.cancel(processId, secretKey),
      notify: (channel, payload, senderProcessId) => backend!.notify(channel, payload, senderProcessId),
    };
    const server = createServer((socket) => backend!.accept(socket));
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        resolve(typeof address === "object" && address !== null ? address.port : 0);
      });
    });
    backend = new FakeBackend(server, port, options, host);
    for (const rule of options.rules ?? []) backend.addRule(rule);
    if (options.failures !== undefined) backend.inject(options.failures);
    return backend;
  }

  /** A connection URL for drivers: `postgres://user[:password]@127.0.0.1:port/database`. */
  url(user = "postgres", database = "postgres", password?: string): string {
    const credentials = password === undefined ? user : `${user}:${encodeURIComponent(password)}`;
    return `postgres://${credentials}@${this.host}:${this.port}/${database}`;
  }

  /** Every connection accepted so far, open or closed, in order. */
  get connections(): readonly FakeConnection[] {
    return this.allConnections;
  }

  get openConnections(): number {
    return this.allConnections.filter((connection) => connection.isOpen).length;
  }

  /** Statements received on one connection (ids start at 1). */
  statementsOf(connectionId: number): RecordedStatement[] {
    return this.statements.filter((statement) => statement.connectionId === connectionId);
  }

  /** Adds a rule after the others (or before them with `first`); returns a function removing it. */
  addRule(rule: FakeRule, placement: { readonly first?: boolean } = {}): () => void {
    const live: LiveRule = { rule, remaining: rule.times ?? Number.POSITIVE_INFINITY };
    this.rules = placement.first === true ? [live, ...this.rules] : [...this.rules, live];
    return () => {
      this.rules = this.rules.filter((entry) => entry !== live);
    };
  }

  /** Turns failures on from now on; returns a function turning them off again. */
  inject(failures: FakeFailures): () => void {
    this.failures = [...this.failures, failures];
    return () => {
      this.failures = this.failures.filter((entry) => entry !== failures);
    };
  }

  /** Resolves with the first statement (already received or still to come) that matches. */
  received(matcher: StatementMatcher, timeoutMs = 5000): Promise<RecordedStatement> {
    const seen = this.statements.find((statement) => matches(matcher, statement.sql, statement.rawParams));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        matcher,
        resolve: (statement) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(statement);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const got = this.statements.map((statement) => statement.sql).join(" | ");
        reject(
          new Error(`no statement matching ${String(matcher)} within ${timeoutMs} ms; received: ${got}`),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /**
   * Sends a NotificationResponse to every session that ran LISTEN on `channel` (idle sessions at
   * once, busy ones before their next ReadyForQuery outside a transaction), as NOTIFY would.
   */
  notify(channel: string, payload = "", senderProcessId = 0): void {
    for (const connection of this.allConnections) connection.deliver(channel, payload, senderProcessId);
  }

  /** Ends every open session the way a server shutdown does: FATAL 57P01, then the socket closes. */
  terminateConnections(): void {
    const shutdown = fakeErrors.adminShutdown();
    for (const connection of this.allConnections) connection.terminate(shutdown);
  }

  /** Stops listening and closes every connection. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    const id = this.nextConnectionId++;
    this.allConnections.push(
      new FakeConnection(socket, this.connectionHost, id, 10_000 + id, randomBytes(4)),
    );
  }

  private record(statement: RecordedStatement): void {
    this.statements.push(statement);
    for (const waiter of this.waiters) {
      if (matches(waiter.matcher, statement.sql, statement.rawParams)) waiter.resolve(statement);
    }
  }

  private cancel(processId: number, secretKey: Buffer): void {
    const target = this.allConnections.find((connection) => connection.processId === processId);
    if (target?.secretKey.equals(secretKey)) target.cancel();
  }

  private async resolve(
    sql: string,
    params: FakeParams,
    ctx: FakeContext,
    fallback: () => FakeReply,
  ): Promise<FakeReply> {
    const reply = (await this.scripted(sql, params, ctx)) ?? fallback();
    return ctx.phase === "execute" ? this.withFailures(sql, params, reply) : reply;
  }

  private async scripted(sql: string, params: FakeParams, ctx: FakeContext): Promise<FakeReply | undefined> {
    for (const live of this.rules) {
      if (live.remaining <= 0 || !matches(live.rule.match, sql, params)) continue;
      if (ctx.phase === "execute") live.remaining--;
      const { reply } = live.rule;
      return typeof reply === "function" ? reply(sql, params, ctx) : reply;
    }
    return this.options.handler?.(sql, params, ctx);
  }

  private withFailures(sql: string, params: FakeParams, reply: FakeReply): FakeReply {
    let result = reply;
    const isPrepare = classifyStatement(sql).kind === StatementKind.prepareTransaction;
    for (const failures of this.failures) {
      if (isPrepare && failures.refusePrepareTransaction !== undefined) {
        result = { error: refusal(failures.refusePrepareTransaction) };
      }
      if (isPrepare && failures.dropAfterPrepareTransaction === true && result.error === undefined) {
        result = { ...result, vanish: true };
      }
      if (asList(failures.stallOn).some((matcher) => matches(matcher, sql, params))) {
        result = { ...result, stall: true };
      }
      const mid = failures.closeMidResult;
      if (mid !== undefined && matches(mid.match, sql, params))
        result = { ...result, closeAfterRows: mid.afterRows };
    }
    return result;
  }
}

export type { FakeAuth, FakeConnection, RecordedStatement };
