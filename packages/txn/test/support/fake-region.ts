import type { Participant, ParticipantConnector, QueryResult, RecoveryConnection } from "../../src/index.js";

/** An error shaped like a driver's: PostgreSQL's SQLSTATE in `.code`, none for a lost connection. */
export function pgError(code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

interface FailureRule {
  matches: (sql: string) => boolean;
  error: Error;
  remaining: number;
  /** The statement takes effect and then its answer is lost, as when a connection drops mid-reply. */
  afterEffect: boolean;
}

type SessionState = "in-transaction" | "failed-transaction" | "idle";

/**
 * One region's server, in memory: just enough of PostgreSQL's two-phase commit (prepared set,
 * pg_prepared_xacts, the ROLLBACK tag for PREPARE in a failed transaction) to test ordering and failures.
 */
export class FakeRegion {
  readonly prepared = new Map<string, number>();
  readonly committed: string[] = [];
  readonly rolledBack: string[] = [];
  /** Every statement any connection sent here, in order. */
  readonly statements: string[] = [];
  down = false;
  now = 1_000_000;
  private readonly rules: FailureRule[] = [];
  private readonly stalls: { matches: (sql: string) => boolean; afterEffect: boolean }[] = [];

  constructor(readonly name: string) {}

  /** The next `times` statements starting with `startsWith` fail with `error`. */
  failOn(startsWith: string, error: Error, times = Number.POSITIVE_INFINITY, afterEffect = false): void {
    this.rules.push({ matches: (sql) => sql.startsWith(startsWith), error, remaining: times, afterEffect });
  }

  /**
   * Statements starting with `startsWith` are never answered, as by a frozen server; with
   * `afterEffect` they take effect first (the server acted, then froze before replying).
   */
  stallOn(startsWith: string, afterEffect = false): void {
    this.stalls.push({ matches: (sql) => sql.startsWith(startsWith), afterEffect });
  }

  /** True when `sql` is to go unanswered; records it and applies its effect when the stall says so. */
  stalled(sql: string, session: { state: SessionState }): boolean {
    const stall = this.stalls.find((s) => s.matches(sql));
    if (stall === undefined) return false;
    this.statements.push(sql);
    if (stall.afterEffect) this.apply(sql, session);
    return true;
  }

  clearFailures(): void {
    this.rules.length = 0;
    this.stalls.length = 0;
  }

  participant(state: SessionState = "in-transaction"): FakeParticipant {
    return new FakeParticipant(this, state);
  }

  /** Leaves a prepared transaction as if some coordinator had prepared it `ageMs` ago. */
  leavePrepared(gid: string, ageMs = 0): void {
    this.prepared.set(gid, this.now - ageMs);
  }

  sent(prefix: string): string[] {
    return this.statements.filter((s) => s.startsWith(prefix));
  }

  execute(sql: string, session: { state: SessionState }): QueryResult {
    this.statements.push(sql);
    if (this.down) throw pgError(undefined, "connection refused");
    const rule = this.rules.find((r) => r.remaining > 0 && r.matches(sql));
    if (rule !== undefined) {
      rule.remaining--;
      if (rule.afterEffect) this.apply(sql, session);
      if (sql.startsWith("PREPARE")) session.state = "idle";
      throw rule.error;
    }
    return this.apply(sql, session);
  }

  private apply(sql: string, session: { state: SessionState }): QueryResult {
    const gid = /'((?:[^']|'')*)'/.exec(sql)?.[1]?.replaceAll("''", "'");
    if (sql.startsWith("PREPARE TRANSACTION")) {
      if (session.state !== "in-transaction") {
        session.state = "idle";
        return { rows: [], command: "ROLLBACK" };
      }
      if (this.prepared.has(gid!))
        throw pgError("42710", `transaction identifier "${gid}" is already in use`);
      this.prepared.set(gid!, this.now);
      session.state = "idle";
      return { rows: [], command: "PREPARE" };
    }
    if (sql.startsWith("COMMIT PREPARED") || sql.startsWith("ROLLBACK PREPARED")) {
      if (!this.prepared.delete(gid!)) throw pgError("42704", `prepared transaction "${gid}" does not exist`);
      (sql.startsWith("COMMIT") ? this.committed : this.rolledBack).push(gid!);
      return { rows: [], command: sql.startsWith("COMMIT") ? "COMMIT" : "ROLLBACK" };
    }
    if (sql === "ROLLBACK") {
      session.state = "idle";
      return { rows: [], command: "ROLLBACK" };
    }
    if (sql.includes("pg_prepared_xacts")) {
      return {
        rows: [...this.prepared].map(([g, at]) => ({ gid: g, age_ms: String(this.now - at) })),
        command: "SELECT",
      };
    }
    throw pgError("42601", `fake region cannot run: ${sql}`);
  }
}

export class FakeParticipant implements Participant, RecoveryConnection {
  readonly region: string;
  closed = false;
  /** Why the caller stopped waiting on this connection, once it did. */
  abandoned: Error | null = null;
  private readonly session: { state: SessionState };
  private wake: ((error: Error) => void) | null = null;

  constructor(
    private readonly server: FakeRegion,
    state: SessionState,
  ) {
    this.region = server.name;
    this.session = { state };
  }

  async query(sql: string): Promise<QueryResult> {
    await Promise.resolve();
    if (this.abandoned !== null) throw pgError("08003", "connection abandoned");
    if (this.server.stalled(sql, this.session)) {
      // A closed socket is all that ends the wait on a server that does not answer.
      return new Promise((_, reject) => {
        this.wake = reject;
      });
    }
    return this.server.execute(sql, this.session);
  }

  abandon(reason: Error): void {
    this.abandoned = reason;
    this.wake?.(pgError("08003", "connection abandoned"));
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export class FakeConnector implements ParticipantConnector {
  readonly opened: string[] = [];
  readonly connections: FakeParticipant[] = [];

  constructor(private readonly regions: readonly FakeRegion[]) {}

  async connect(region: string): Promise<RecoveryConnection> {
    const server = this.regions.find((r) => r.name === region);
    if (server === undefined || server.down) throw pgError(undefined, `cannot reach ${region}`);
    this.opened.push(region);
    const connection = server.participant("idle");
    this.connections.push(connection);
    return connection;
  }
}
