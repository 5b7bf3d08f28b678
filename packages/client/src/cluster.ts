import postgres from "postgres";
import { sameEndpoint, urlProblem } from "./dsn.js";
import { invalidOption, invalidUrl, primaryUnreachable } from "./errors.js";
import { type MigrateOptions, type MigrateResult, type Migration, migrate } from "./migrate.js";
import { type ProbeFunction, type Sql, selectOne } from "./probe.js";
import { ReplicaCircuit, type ReplicaHealth } from "./replica-circuit.js";

/** One change of the replica's health, for logs and metrics. */
export type ReplicaEvent =
  | {
      readonly kind: "tripped";
      readonly reason: "startup" | "reported";
      readonly error: unknown;
      readonly retryInMs: number;
    }
  | { readonly kind: "probe_failed"; readonly error: unknown; readonly retryInMs: number }
  | { readonly kind: "restored"; readonly downForMs: number };

export interface ClusterOptions {
  /** The primary's URL (`postgres://user:password@host:5432/db`). Every write goes here. */
  readonly primary: string;
  /**
   * The replica's URL. Empty, absent, or naming the same endpoint as `primary` means single-pool
   * mode: `read()` is the primary, and nothing is probed.
   */
  readonly replica?: string | undefined;
  /** postgres.js options applied to both pools (max, idle_timeout, ssl, ...). */
  readonly postgres?: postgres.Options<Record<string, postgres.PostgresType>>;
  /** First backoff window after the replica fails; default 1000 ms. */
  readonly replicaRetryMinMs?: number;
  /** Longest backoff window; the window doubles up to it on each failed probe. Default 30000 ms. */
  readonly replicaRetryMaxMs?: number;
  /** How long a probe waits for SELECT 1; default 1000 ms. */
  readonly probeTimeoutMs?: number;
  /** How long each start-up ping waits, covering a first TLS and SCRAM handshake; default 5000 ms. */
  readonly startupTimeoutMs?: number;
  /** Clock in milliseconds; `Date.now` unless a test drives time. */
  readonly now?: () => number;
  /** How an endpoint is checked at start-up and when a probe is due; `SELECT 1` with the timeout unless replaced. */
  readonly probe?: ProbeFunction;
  /** Called on each health change; exceptions it throws are ignored. Default: one console.warn line. */
  readonly onReplicaEvent?: (event: ReplicaEvent) => void;
}

const defaults = {
  replicaRetryMinMs: 1_000,
  replicaRetryMaxMs: 30_000,
  probeTimeoutMs: 1_000,
  startupTimeoutMs: 5_000,
} as const;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function describeReplicaEvent(event: ReplicaEvent): string {
  switch (event.kind) {
    case "tripped":
      return `geo/client: replica unavailable (${event.reason}): ${messageOf(event.error)}; reads use the primary, next probe in ${event.retryInMs} ms`;
    case "probe_failed":
      return `geo/client: replica probe failed: ${messageOf(event.error)}; next probe in ${event.retryInMs} ms`;
    case "restored":
      return `geo/client: replica restored after ${event.downForMs} ms; reads use it again`;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw invalidOption(name, `must be a positive number of milliseconds, got ${value}`);
  return value;
}

function checkedUrl(option: string, text: string): string {
  const problem = urlProblem(text);
  if (problem !== undefined) throw invalidUrl(`option ${option}`, problem);
  return text;
}

/**
 * A primary pool and an optional replica pool, with the caller choosing per query:
 * `write()` for anything that writes or locks, `read()` for reads that tolerate replica lag,
 * `primary()` for reads that must see this process's own writes.
 *
 * `read()` is synchronous. A healthy replica is returned after one field check, never probed.
 * When the replica is out of use and its backoff window is over, the read that notices starts
 * one probe in the background and is itself served by the primary (always a correct answer);
 * the probe's outcome decides the reads after it. No read ever waits on a probe.
 *
 * @example
 * const cluster = await Cluster.connect({ primary: process.env.DATABASE_URL!, replica: process.env.DATABASE_RO_URL });
 * await cluster.write()`insert into orders ${cluster.write()(order)}`;
 * const recent = await cluster.read()`select * from orders order by id desc limit 20`;
 * const mine = await cluster.primary()`select * from orders where id = ${order.id}`;
 * await cluster.close();
 */
export class Cluster {
  readonly #primary: Sql;
  readonly #replica: Sql | undefined;
  readonly #circuit: ReplicaCircuit;
  readonly #probe: ProbeFunction;
  readonly #probeTimeoutMs: number;
  readonly #onEvent: (event: ReplicaEvent) => void;
  #probing: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    primary: Sql,
    replica: Sql | undefined,
    circuit: ReplicaCircuit,
    probe: ProbeFunction,
    probeTimeoutMs: number,
    onEvent: (event: ReplicaEvent) => void,
  ) {
    this.#primary = primary;
    this.#replica = replica;
    this.#circuit = circuit;
    this.#probe = probe;
    this.#probeTimeoutMs = probeTimeoutMs;
    this.#onEvent = onEvent;
  }

  /**
   * Opens the pools and pings both endpoints in parallel. A primary that does not answer fails
   * start-up (`primary_unreachable`); a replica that does not answer only trips the circuit, so
   * the service starts and reads from the primary until a probe finds the replica back.
   */
  static async connect(options: ClusterOptions): Promise<Cluster> {
    const retryMinMs = positive("replicaRetryMinMs", options.replicaRetryMinMs ?? defaults.replicaRetryMinMs);
    const retryMaxMs = positive("replicaRetryMaxMs", options.replicaRetryMaxMs ?? defaults.replicaRetryMaxMs);
    if (retryMaxMs < retryMinMs)
      throw invalidOption("replicaRetryMaxMs", `(${retryMaxMs}) is below replicaRetryMinMs (${retryMinMs})`);
    const probeTimeoutMs = positive("probeTimeoutMs", options.probeTimeoutMs ?? defaults.probeTimeoutMs);
    const startupTimeoutMs = positive(
      "startupTimeoutMs",
      options.startupTimeoutMs ?? defaults.startupTimeoutMs,
    );
    const primaryUrl = checkedUrl("primary", options.primary);
    const replicaText = options.replica ?? "";
    // Both URLs are checked before any pool exists, so a typo never leaves a pool to clean up.
    const replicaUrl =
      replicaText === "" || sameEndpoint(primaryUrl, replicaText)
        ? undefined
        : checkedUrl("replica", replicaText);

    const pgOptions = options.postgres ?? {};
    const primary = postgres(primaryUrl, pgOptions);
    const replica = replicaUrl === undefined ? undefined : postgres(replicaUrl, pgOptions);
    const probe = options.probe ?? selectOne;
    const circuit = new ReplicaCircuit(
      replica !== undefined,
      { retryMinMs, retryMaxMs },
      options.now ?? Date.now,
    );
    const onEvent = options.onReplicaEvent ?? ((event) => console.warn(describeReplicaEvent(event)));
    const cluster = new Cluster(primary, replica, circuit, probe, probeTimeoutMs, onEvent);

    const [primaryPing, replicaPing] = await Promise.allSettled([
      probe(primary, startupTimeoutMs),
      replica === undefined ? Promise.resolve() : probe(replica, startupTimeoutMs),
    ]);
    if (primaryPing.status === "rejected") {
      await cluster.close({ timeoutSeconds: 0 });
      throw primaryUnreachable(primaryPing.reason);
    }
    if (replicaPing.status === "rejected") cluster.#trip(replicaPing.reason, "startup");
    return cluster;
  }

  /** The primary pool: writes, locks (SELECT ... FOR UPDATE), DDL, and writing CTEs. */
  write(): Sql {
    return this.#primary;
  }

  /** The primary pool, named for reads that must see this process's own recent writes. */
  primary(): Sql {
    return this.#primary;
  }

  /** The replica while it is configured and healthy, the primary otherwise. Never waits. */
  read(): Sql {
    const replica = this.#replica;
    if (replica === undefined) return this.#primary;
    const route = this.#circuit.route();
    switch (route) {
      case "replica":
        return replica;
      case "primary":
        return this.#primary;
      case "probe":
        if (this.#closing === undefined) this.#startProbe(replica);
        return this.#primary;
    }
  }

  /** True when reads and writes go to two pools; false in single-pool mode. */
  get split(): boolean {
    return this.#replica !== undefined;
  }

  /**
   * Takes the replica out of use after it failed a query (connection refused, reset, timed out).
   * `from` is the pool the failed query ran on: when given and not the replica, nothing trips,
   * so an error from a read that the primary served cannot knock out a replica that recovered.
   * Returns true when this call tripped the circuit.
   */
  reportReplicaError(error: unknown, from?: Sql): boolean {
    if (this.#replica === undefined) return false;
    if (from !== undefined && from !== this.#replica) return false;
    return this.#trip(error, "reported");
  }

  /** The replica's health, for a health endpoint or a log line. */
  replicaHealth(): ReplicaHealth {
    return this.#circuit.health();
  }

  /** Resolves once no probe is running (tests, and orderly shutdown). */
  async settled(): Promise<void> {
    while (this.#probing !== undefined) await this.#probing;
  }

  /** Runs `migrations` on the primary; see {@link migrate}. */
  migrate(migrations: readonly Migration[], options?: MigrateOptions): Promise<MigrateResult> {
    return migrate(this, migrations, options);
  }

  /** Waits for a running probe, then ends both pools, letting queries finish for up to `timeoutSeconds` (default 5). */
  close(options: { timeoutSeconds?: number } = {}): Promise<void> {
    this.#closing ??= (async () => {
      await this.settled();
      const timeout = options.timeoutSeconds ?? 5;
      await Promise.all([this.#primary.end({ timeout }), this.#replica?.end({ timeout })]);
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #trip(error: unknown, reason: "startup" | "reported"): boolean {
    const retryInMs = this.#circuit.trip(error);
    if (retryInMs === undefined) return false;
    this.#emit({ kind: "tripped", reason, error, retryInMs });
    return true;
  }

  #startProbe(replica: Sql): void {
    // `.finally` always runs after this assignment, even when the probe throws synchronously.
    const probing = this.#runProbe(replica).finally(() => {
      if (this.#probing === probing) this.#probing = undefined;
    });
    this.#probing = probing;
  }

  async #runProbe(replica: Sql): Promise<void> {
    try {
      await this.#probe(replica, this.#probeTimeoutMs);
      this.#emit({ kind: "restored", downForMs: this.#circuit.probeSucceeded() });
    } catch (error) {
      this.#emit({ kind: "probe_failed", error, retryInMs: this.#circuit.probeFailed(error) });
    }
  }

  #emit(event: ReplicaEvent): void {
    try {
      this.#onEvent(event);
    } catch {
      // A logging callback must not change routing or surface as an unhandled rejection.
    }
  }
}
