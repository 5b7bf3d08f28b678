import { PgError, SqlState } from "@geo/proto";
import { BackendConnection, type ConnectOptions } from "../backend-connection.js";
import type { ConnectFunction } from "../pool-config.js";
import { type BackendEndpoint, BackendRole, endpointAddress } from "./backend-endpoint.js";
import { HEALTH_APPLICATION_NAME } from "./connection-prober.js";
import { backendStoppedAnswering, backendUnreachable } from "./health-errors.js";
import type { HealthEvent } from "./health-event.js";
import { StateChangeCause } from "./health-event.js";

/** `application_name` of the guard's own liveness probes. */
export const LIVENESS_APPLICATION_NAME = "geoproxy liveness";

/** A backend the guard watches, with the timings of its own region where it has some. */
export interface GuardedEndpoint extends BackendEndpoint {
  /** This backend's `timeoutMs`, instead of the guard's. */
  readonly timeoutMs?: number | undefined;
  /** This backend's `keepaliveMs`, instead of the guard's (0: off). */
  readonly keepaliveMs?: number | undefined;
}

export interface UnreachableGuardOptions {
  /** Every backend of the topology. Connections to other addresses are passed through untouched. */
  readonly endpoints: readonly GuardedEndpoint[];
  /**
   * How long a backend may leave a statement unanswered while answering no liveness probe before
   * it is declared unreachable (`[pool] unreachable_timeout_ms`), unless its endpoint sets its own.
   */
  readonly timeoutMs: number;
  /**
   * How often waiting connections are looked at; `min(500, timeoutMs / 4)` when omitted, with the
   * shortest `timeoutMs` of any endpoint.
   */
  readonly checkEveryMs?: number | undefined;
  /**
   * TCP keepalive idle time set on every guarded backend socket, unless its endpoint sets its own;
   * 0 or omitted: off.
   */
  readonly keepaliveMs?: number | undefined;
  /** Opens the liveness probes' connections (never guarded); `BackendConnection.connect` when omitted. */
  readonly probeConnect?: ConnectFunction | undefined;
  /** Told each time a backend is declared unreachable or answers again (logs, the health monitor). */
  readonly onChange?: ((change: UnreachableChange) => void) | undefined;
}

/** A backend declared unreachable, or reachable again. */
export interface UnreachableChange {
  readonly endpoint: BackendEndpoint;
  readonly address: string;
  readonly unreachable: boolean;
  /** Why it was declared unreachable (absent when it came back). */
  readonly reason?: string | undefined;
  /** Connections broken by this change. */
  readonly broken: number;
}

/** The part of the health monitor the guard listens to. */
export interface HealthEvents {
  subscribe(listener: (event: HealthEvent) => void): () => void;
}

interface Tripped {
  readonly since: number;
  readonly reason: string;
}

interface EndpointRecord {
  readonly endpoint: BackendEndpoint;
  readonly address: string;
  readonly timeoutMs: number;
  readonly keepaliveMs: number;
  readonly connections: Set<BackendConnection>;
  /** Connections seen waiting on an answer at the previous check. */
  waiting: Set<BackendConnection>;
  /** When the first liveness probe that has not been answered since started. */
  silentSince: number | null;
  probing: boolean;
  probeConnection: BackendConnection | null;
  tripped: Tripped | null;
}

/**
 * Bounds how long the proxy waits on a backend that stopped answering while its socket stays open
 * (a SIGSTOPped server, a dead network path): nothing in TCP notices that, so a statement would
 * wait forever.
 *
 * Every connection the proxy opens to a backend goes through `wrap`. A connection that has waited
 * on an answer across two checks gets its backend probed with `SELECT 1` on a connection of the
 * guard's own. A healthy server answers at once, however long the statement runs, so long queries
 * are never cut short. A backend that answers no probe for `timeoutMs` is declared unreachable:
 * every connection to it is broken with an error naming its region (08006), and new connections
 * to it fail at once (08001) until a probe is answered again. The health monitor marking a backend
 * down after failed probes (`watch`) has the same effect, and its coming back up lifts it.
 *
 * @example
 * ```ts
 * const guard = new UnreachableGuard({ endpoints, timeoutMs: 5000 });
 * const pool = new Pool({ key, connect: guard.wrap((options) => BackendConnection.connect(options)) });
 * guard.watch(healthMonitor);
 * await guard.close();
 * ```
 */
export class UnreachableGuard {
  private readonly records = new Map<string, EndpointRecord>();
  private readonly timer: NodeJS.Timeout;
  private readonly checkEveryMs: number;
  private readonly probeConnect: ConnectFunction;
  private readonly unsubscribes: (() => void)[] = [];
  private closed = false;

  constructor(private readonly options: UnreachableGuardOptions) {
    this.probeConnect =
      options.probeConnect ?? ((connectOptions) => BackendConnection.connect(connectOptions));
    let shortestMs = options.timeoutMs;
    for (const endpoint of options.endpoints) {
      const address = endpointAddress(endpoint);
      const timeoutMs = endpoint.timeoutMs ?? options.timeoutMs;
      shortestMs = Math.min(shortestMs, timeoutMs);
      this.records.set(address, {
        endpoint,
        address,
        timeoutMs,
        keepaliveMs: endpoint.keepaliveMs ?? options.keepaliveMs ?? 0,
        connections: new Set(),
        waiting: new Set(),
        silentSince: null,
        probing: false,
        probeConnection: null,
        tripped: null,
      });
    }
    this.checkEveryMs = options.checkEveryMs ?? Math.max(10, Math.min(500, Math.floor(shortestMs / 4)));
    this.timer = setInterval(() => this.check(), this.checkEveryMs);
    this.timer.unref();
  }

  /**
   * A connect function whose connections the guard watches: it fails at once while the backend is
   * unreachable, and sets TCP keepalive on the socket. Health-monitor probe connections pass
   * through unwatched (they are how a backend is seen to come back).
   */
  wrap(inner: ConnectFunction): ConnectFunction {
    return async (options: ConnectOptions) => {
      const record = this.records.get(`${options.host}:${options.port}`);
      if (record === undefined || options.applicationName === HEALTH_APPLICATION_NAME) return inner(options);
      if (record.tripped !== null) throw unreachableNow(record, Date.now());
      const connection = await inner(withKeepalive(options, record.keepaliveMs));
      if (record.tripped !== null && typeof connection.fail === "function") {
        connection.destroy();
        throw unreachableNow(record, Date.now());
      }
      if (!this.closed && typeof connection.fail === "function") record.connections.add(connection);
      return connection;
    };
  }

  /** Trips a backend when the health monitor marks it down after failed probes; lifts it when it is up. */
  watch(monitor: HealthEvents): void {
    this.unsubscribes.push(
      monitor.subscribe((event) => {
        if (event.type !== "state") return;
        const record = this.records.get(event.backend.address);
        if (record === undefined) return;
        if (event.backend.state === "down" && event.cause === StateChangeCause.probeFailures)
          this.trip(
            record,
            `the health monitor marked it down${event.backend.lastError === undefined ? "" : ` (${event.backend.lastError})`}`,
          );
        else if (event.backend.state === "up") this.lift(record);
      }),
    );
  }

  /** Whether new connections to `host:port` fail at once now. */
  isUnreachable(address: string): boolean {
    return this.records.get(address)?.tripped != null;
  }

  /** Stops checking and closes the probe connections. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    const probes: Promise<void>[] = [];
    for (const record of this.records.values()) {
      record.connections.clear();
      record.waiting.clear();
      const probe = record.probeConnection;
      record.probeConnection = null;
      if (probe !== null) probes.push(probe.close().catch(() => probe.destroy()));
    }
    await Promise.all(probes);
  }

  private check(): void {
    if (this.closed) return;
    const now = Date.now();
    for (const record of this.records.values()) {
      const waiting = new Set<BackendConnection>();
      let stale = false;
      for (const connection of record.connections) {
        if (!connection.usable) {
          record.connections.delete(connection);
          continue;
        }
        if (record.tripped !== null) {
          // Opened just before the trip: it cannot be trusted either.
          connection.fail(unreachableBroken(record, record.tripped.reason));
          record.connections.delete(connection);
          continue;
        }
        if (connection.isQuiescent) continue;
        waiting.add(connection);
        if (record.waiting.has(connection)) stale = true;
      }
      record.waiting = waiting;
      if (record.tripped !== null) {
        this.probe(record);
        continue;
      }
      if (stale) {
        record.silentSince ??= now;
        if (now - record.silentSince >= record.timeoutMs)
          this.trip(record, `it answered no liveness probe for ${now - record.silentSince} ms`);
        else this.probe(record);
      } else if (!record.probing) record.silentSince = null;
    }
  }

  /** One liveness probe at a time per backend; any answer from the server counts. */
  private probe(record: EndpointRecord): void {
    if (record.probing || this.closed) return;
    record.probing = true;
    this.answers(record).then((answered) => {
      record.probing = false;
      if (!answered) return;
      record.silentSince = null;
      this.lift(record);
    }, noop);
  }

  private async answers(record: EndpointRecord): Promise<boolean> {
    const { endpoint } = record;
    // While unreachable, short probes one after another notice its return soon after it happens.
    const budget =
      record.tripped === null ? record.timeoutMs : Math.min(record.timeoutMs, this.checkEveryMs * 2);
    const deadline = Date.now() + budget;
    let connection = record.probeConnection;
    if (connection !== null && !connection.usable) {
      connection.destroy();
      connection = null;
    }
    try {
      if (connection === null) {
        connection = await this.probeConnect({
          host: endpoint.host,
          port: endpoint.port,
          database: endpoint.database,
          user: endpoint.user,
          password: endpoint.password,
          applicationName: LIVENESS_APPLICATION_NAME,
          connectTimeoutMs: budget,
        });
        if (this.closed) {
          connection.destroy();
          return false;
        }
        record.probeConnection = connection;
      }
      await connection.simpleQuery("SELECT 1", { timeoutMs: Math.max(1, deadline - Date.now()) });
      return true;
    } catch (error) {
      // The server's own error (a refused login, too many connections) is an answer: it is alive.
      const answered =
        error instanceof PgError &&
        !error.code.startsWith("08") &&
        error.code !== SqlState.query_canceled &&
        error.code !== SqlState.admin_shutdown;
      if (!answered || connection?.usable !== true) {
        connection?.destroy();
        if (record.probeConnection === connection) record.probeConnection = null;
      }
      return answered;
    }
  }

  private trip(record: EndpointRecord, reason: string): void {
    if (record.tripped !== null || this.closed) return;
    record.tripped = { since: Date.now(), reason };
    const error = unreachableBroken(record, reason);
    let broken = 0;
    for (const connection of record.connections) {
      if (connection.usable) {
        connection.fail(error);
        broken++;
      }
    }
    record.connections.clear();
    record.waiting.clear();
    this.options.onChange?.({
      endpoint: record.endpoint,
      address: record.address,
      unreachable: true,
      reason,
      broken,
    });
    this.probe(record);
  }

  private lift(record: EndpointRecord): void {
    if (record.tripped === null) return;
    record.tripped = null;
    record.silentSince = null;
    this.options.onChange?.({
      endpoint: record.endpoint,
      address: record.address,
      unreachable: false,
      broken: 0,
    });
  }
}

/** `options` with TCP keepalive set on the socket as soon as it is connected; unchanged when 0. */
function withKeepalive(options: ConnectOptions, keepaliveMs: number): ConnectOptions {
  if (keepaliveMs <= 0) return options;
  const upgrade = options.upgrade;
  return {
    ...options,
    upgrade: (socket, context) => {
      socket.setKeepAlive(true, keepaliveMs);
      return upgrade === undefined ? Promise.resolve(socket) : upgrade(socket, context);
    },
  };
}

function named(record: EndpointRecord): string {
  const { region, role } = record.endpoint;
  return `region "${region}" (${role === BackendRole.primary ? "primary" : "replica"} ${record.address})`;
}

/** What a connection waiting on a backend declared unreachable is broken with. */
export function unreachableBroken(
  record: Pick<EndpointRecord, "endpoint" | "address">,
  reason: string,
): PgError {
  return backendStoppedAnswering(named(record as EndpointRecord), reason);
}

/** What a new connection to a backend declared unreachable fails with, at once. */
function unreachableNow(record: EndpointRecord, now: number): PgError {
  const tripped = record.tripped!;
  return backendUnreachable(named(record), tripped.reason, now - tripped.since);
}

function noop(): void {}
