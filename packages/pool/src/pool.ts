import { assertNever, type PgError } from "@geo/proto";
import { BackendConnection } from "./backend-connection.js";
import { poolCheckoutTimeout, poolClosed, poolQueueFull } from "./errors.js";
import { Lease, type LeaseOwner } from "./lease.js";
import {
  type ConnectFunction,
  DEFAULT_POOL_CONFIG,
  type PoolCredentials,
  type PoolKey,
  type PoolOptions,
  poolName,
  type ResolvedPoolConfig,
} from "./pool-config.js";
import { ResetKind, strongerReset } from "./reset-kind.js";

/**
 * The reset of settings alone. RESET ALL leaves `role` and `session_authorization` as they are
 * (PostgreSQL marks both GUC_NO_RESET_ALL): a pooled connection must not keep a client's SET ROLE
 * or SET SESSION AUTHORIZATION for the next one, so they are reset first (DISCARD ALL does so too).
 */
export const RESET_SETTINGS = "SET SESSION AUTHORIZATION DEFAULT; RESET ROLE; RESET ALL";

import { type QueueNode, WaiterQueue } from "./waiter-queue.js";

/** Where a pooled connection stands. */
export const SlotState = {
  idle: "idle",
  busy: "busy",
  resetting: "resetting",
} as const;
export type SlotState = (typeof SlotState)[keyof typeof SlotState];

interface Slot {
  readonly connection: BackendConnection;
  state: SlotState;
  idleSince: number;
  unsubscribe: () => void;
}

interface Waiter {
  readonly resolve: (lease: Lease) => void;
  readonly reject: (error: PgError) => void;
  readonly since: number;
  timer: NodeJS.Timeout | null;
}

/** A snapshot of a pool for metrics and SHOW POOLS. */
export interface PoolStats {
  /** `host:port/database as user`. */
  readonly name: string;
  readonly key: PoolKey;
  readonly min: number;
  readonly max: number;
  readonly idle: number;
  readonly busy: number;
  /** Connections being reset between clients. */
  readonly resetting: number;
  /** Connections being opened. */
  readonly connecting: number;
  /** Checkouts queued. */
  readonly waiting: number;
  /** idle + busy + resetting + connecting. */
  readonly total: number;
  /** Connections opened since the pool was created. */
  readonly created: number;
  /** Connections closed because broken, failed reset, expired, idle too long or discarded. */
  readonly discarded: number;
  /** Checkouts that failed with 57014 after waiting `checkoutTimeoutMs`. */
  readonly timeouts: number;
  /** Checkouts refused with 53300 because `maxWaiters` were already waiting. */
  readonly queueFull: number;
  /** Attempts to open a connection that failed. */
  readonly connectFailures: number;
  /** Checkouts served. */
  readonly checkouts: number;
  /** Resets run between clients (`DISCARD ALL` or `RESET ALL`). */
  readonly resets: number;
  /** Total time served checkouts spent waiting, in ms. */
  readonly waitTimeMs: number;
}

/** Options of `Pool.close`. */
export interface PoolCloseOptions {
  /** How long leased connections may stay out before being destroyed. Default 5000 ms. */
  readonly timeoutMs?: number | undefined;
}

/**
 * Connections to one (endpoint, database, role), handed out one client at a time.
 *
 * - A checkout takes an idle connection (most recently used first), opens one while below `max`,
 *   or waits in a FIFO of at most `maxWaiters`, for at most `checkoutTimeoutMs`: it fails with
 *   53300 (queue full) or 57014 (timeout), never hangs.
 * - A broken connection is discarded, never returned; one that changed session state is reset in
 *   the background and only then handed out again.
 *
 * @example
 * ```ts
 * const pool = new Pool({ key: { host: "127.0.0.1", port: 5432, database: "app", user: "app" }, max: 10 });
 * {
 *   await using lease = await pool.acquire();
 *   const { rows } = await lease.connection.simpleQuery("SELECT now()");
 * } // released here
 * await pool.close();
 * ```
 */
export class Pool implements LeaseOwner {
  /** `host:port/database as user`. */
  readonly name: string;
  readonly key: PoolKey;
  readonly config: ResolvedPoolConfig;
  private readonly credentials: PoolCredentials;
  private readonly connectFn: ConnectFunction;
  private readonly slots = new Map<BackendConnection, Slot>();
  /** Idle connections as a stack: the most recently used is reused first, the rest age out. */
  private readonly idle: Slot[] = [];
  private readonly waiters = new WaiterQueue<Waiter>();
  private connecting = 0;
  private resettingCount = 0;
  private busyCount = 0;
  private closing = false;
  private closedPromise: Promise<void> | null = null;
  private readonly sweeper: NodeJS.Timeout;
  private readonly drainedListeners = new Set<() => void>();
  private counters = {
    created: 0,
    discarded: 0,
    timeouts: 0,
    queueFull: 0,
    connectFailures: 0,
    checkouts: 0,
    resets: 0,
    waitTimeMs: 0,
  };

  constructor(options: PoolOptions) {
    this.key = options.key;
    this.name = poolName(options.key);
    this.config = {
      min: options.min ?? DEFAULT_POOL_CONFIG.min,
      max: options.max ?? DEFAULT_POOL_CONFIG.max,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_POOL_CONFIG.connectTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_POOL_CONFIG.idleTimeoutMs,
      checkoutTimeoutMs: options.checkoutTimeoutMs ?? DEFAULT_POOL_CONFIG.checkoutTimeoutMs,
      maxWaiters: options.maxWaiters ?? DEFAULT_POOL_CONFIG.maxWaiters,
      warm: options.warm ?? DEFAULT_POOL_CONFIG.warm,
      maxLifetimeMs: options.maxLifetimeMs ?? DEFAULT_POOL_CONFIG.maxLifetimeMs,
      resetTimeoutMs: options.resetTimeoutMs ?? DEFAULT_POOL_CONFIG.resetTimeoutMs,
    };
    if (this.config.max < 1) throw new RangeError(`pool ${this.name}: max must be at least 1`);
    if (this.config.min > this.config.max) throw new RangeError(`pool ${this.name}: min exceeds max`);
    this.credentials = {
      password: options.password,
      scramKeys: options.scramKeys,
      md5Hash: options.md5Hash,
      applicationName: options.applicationName,
      startupParams: options.startupParams,
      upgrade: options.upgrade,
    };
    this.connectFn = options.connect ?? ((connectOptions) => BackendConnection.connect(connectOptions));
    const period = Math.max(10, Math.min(this.config.idleTimeoutMs / 2, 10_000));
    this.sweeper = setInterval(() => this.sweep(), period);
    this.sweeper.unref();
  }

  /**
   * Checks out a connection. Rejects with 53300 when `maxWaiters` checkouts already wait, 57014
   * after `checkoutTimeoutMs`, 57P01 when the pool closes, or the connect error (08001, 28P01...)
   * when the connection opened for this checkout could not be established.
   */
  acquire(): Promise<Lease> {
    if (this.closing) return Promise.reject(poolClosed(this.name));
    const slot = this.takeIdle();
    if (slot !== null) return Promise.resolve(this.lend(slot, 0));
    // Only checkouts that no new connection can serve count against maxWaiters.
    if (this.totalCount >= this.config.max && this.waiters.size >= this.config.maxWaiters) {
      this.counters.queueFull++;
      return Promise.reject(poolQueueFull(this.name, this.config.maxWaiters));
    }
    return new Promise<Lease>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, since: Date.now(), timer: null };
      const node = this.waiters.push(waiter);
      waiter.timer = setTimeout(() => this.expire(node), this.config.checkoutTimeoutMs);
      this.grow();
    });
  }

  /**
   * Checks out a connection at the pool's own settings, for statements the proxy runs for itself
   * (logins' checks, catalog reads, the directory, commits of prepared transactions). In
   * transaction pooling a connection comes back carrying the last client's replayed settings,
   * which the next client's replay corrects but the proxy's own statements would run under: a
   * `SET ROLE` to a role dropped since (every statement then fails, `invalid role OID`), a
   * `default_transaction_read_only`, a `statement_timeout`, another `search_path`. An idle
   * connection that carries none is preferred; otherwise the lease is reset first.
   */
  async acquireAtDefaults(): Promise<Lease> {
    if (!this.closing) {
      const clean = this.takeIdleAtDefaults();
      if (clean !== null) return this.lend(clean, 0);
    }
    const lease = await this.acquire();
    const connection = lease.connection;
    if (connection.appliedSettings.size === 0 && connection.dirty === ResetKind.none) return lease;
    const kind = connection.dirty === ResetKind.full ? ResetKind.full : ResetKind.settings;
    try {
      await connection.simpleQuery(kind === ResetKind.full ? "DISCARD ALL" : RESET_SETTINGS, {
        timeoutMs: this.config.resetTimeoutMs,
      });
    } catch (error) {
      lease.discard("reset failed");
      throw error;
    }
    this.counters.resets++;
    connection.markClean(kind);
    return lease;
  }

  /**
   * Checks out an idle connection at once, or returns null when none is at hand (then use
   * `acquire`). The common case on a busy proxy, without a promise or a turn of the event loop.
   */
  tryAcquire(): Lease | null {
    if (this.closing) return null;
    const slot = this.takeIdle();
    return slot === null ? null : this.lend(slot, 0);
  }

  /**
   * As `tryAcquire`, but only an idle connection `accept` takes: the most recently used such one
   * (for a caller that can use only a connection already in a given state, a client's settings).
   * Null when none is; the idle connections then stay as they were and nothing is counted.
   */
  tryAcquireIf(accept: (connection: BackendConnection) => boolean): Lease | null {
    if (this.closing) return null;
    const idle = this.idle;
    for (let i = idle.length - 1; i >= 0; i--) {
      const slot = idle[i]!;
      // An unusable or expired one is left for `takeIdle` to retire.
      if (!slot.connection.usable || this.expired(slot) || !accept(slot.connection)) continue;
      if (i === idle.length - 1) idle.pop();
      else idle.splice(i, 1);
      return this.lend(slot, 0);
    }
    return null;
  }

  /**
   * Opens connections until `min` are open. Resolves when they are ready; rejects with the first
   * connect error (so a start-up can report an unreachable backend).
   */
  async warm(): Promise<void> {
    const missing = this.config.min - this.totalCount;
    if (missing <= 0 || this.closing) return;
    const opened = await Promise.allSettled(Array.from({ length: missing }, () => this.open()));
    const failed = opened.find((result) => result.status === "rejected");
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  }

  /** Counts and counters, for metrics and SHOW POOLS. */
  stats(): PoolStats {
    return {
      name: this.name,
      key: this.key,
      min: this.config.min,
      max: this.config.max,
      idle: this.idle.length,
      busy: this.busyCount,
      resetting: this.resettingCount,
      connecting: this.connecting,
      waiting: this.waiters.size,
      total: this.totalCount,
      ...this.counters,
    };
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.closing;
  }

  /**
   * Stops serving: queued checkouts fail with 57P01, idle connections close at once, leased ones
   * close when released; after `timeoutMs` the rest are destroyed.
   */
  close(options: PoolCloseOptions = {}): Promise<void> {
    if (this.closedPromise !== null) return this.closedPromise;
    this.closing = true;
    clearInterval(this.sweeper);
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) {
      if (waiter.timer !== null) clearTimeout(waiter.timer);
      waiter.reject(poolClosed(this.name));
    }
    const closingIdle = this.idle.splice(0).map((slot) => this.retire(slot, false));
    const timeoutMs = options.timeoutMs ?? 5_000;
    this.closedPromise = (async () => {
      await Promise.all(closingIdle);
      if (this.slots.size > 0 || this.connecting > 0) {
        let timer: NodeJS.Timeout | undefined;
        const drained = new Promise<void>((resolve) => this.drainedListeners.add(resolve));
        const expired = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        });
        await Promise.race([drained, expired]);
        clearTimeout(timer);
        for (const slot of [...this.slots.values()]) {
          this.slots.delete(slot.connection);
          slot.unsubscribe();
          slot.connection.destroy();
        }
      }
    })();
    return this.closedPromise;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** @internal Called by `Lease.release`. */
  giveBack(connection: BackendConnection, reset: boolean | ResetKind | undefined): void {
    const slot = this.slots.get(connection);
    if (slot === undefined || slot.state !== SlotState.busy) return;
    this.busyCount--;
    if (this.closing) return void this.retire(slot, true);
    if (!connection.usable) return void this.retire(slot, false);
    // A reply still in flight would reach the next client: only a connection at rest comes back.
    if (!connection.isQuiescent) return void this.retire(slot, false);
    if (this.expired(slot)) return void this.retire(slot, true);
    let kind = connection.dirty;
    if (reset === true) kind = ResetKind.full;
    else if (reset !== undefined && reset !== false) kind = strongerReset(kind, reset);
    if (connection.txStatus !== "I") kind = ResetKind.full;
    if (kind === ResetKind.none) {
      this.offer(slot);
      return;
    }
    this.reset(slot, kind);
  }

  /** @internal Called by `Lease.discard`. */
  discardLeased(connection: BackendConnection, _reason: string): void {
    const slot = this.slots.get(connection);
    if (slot === undefined || slot.state !== SlotState.busy) return;
    this.busyCount--;
    void this.retire(slot, connection.usable && connection.isQuiescent);
  }

  private get totalCount(): number {
    return this.slots.size + this.connecting;
  }

  private takeIdle(): Slot | null {
    for (let slot = this.idle.pop(); slot !== undefined; slot = this.idle.pop()) {
      if (slot.connection.usable && !this.expired(slot)) return slot;
      void this.retire(slot, slot.connection.usable);
    }
    return null;
  }

  /** The most recently used idle connection that carries no client's settings, if any. */
  private takeIdleAtDefaults(): Slot | null {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const slot = this.idle[i]!;
      const connection = slot.connection;
      if (!connection.usable || this.expired(slot)) continue;
      if (connection.appliedSettings.size > 0 || connection.dirty !== ResetKind.none) continue;
      this.idle.splice(i, 1);
      return slot;
    }
    return null;
  }

  private lend(slot: Slot, waitedMs: number): Lease {
    slot.state = SlotState.busy;
    this.busyCount++;
    this.counters.checkouts++;
    this.counters.waitTimeMs += waitedMs;
    return new Lease(this, slot.connection, waitedMs);
  }

  /** Hands a ready connection to the oldest waiter, or parks it as idle. */
  private offer(slot: Slot): void {
    if (this.closing) return void this.retire(slot, true);
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      if (waiter.timer !== null) clearTimeout(waiter.timer);
      waiter.resolve(this.lend(slot, Date.now() - waiter.since));
      return;
    }
    slot.state = SlotState.idle;
    slot.idleSince = Date.now();
    this.idle.push(slot);
  }

  /** Opens connections for waiters that no pending connect or reset will serve. */
  private grow(): void {
    while (
      !this.closing &&
      this.waiters.size > this.connecting + this.resettingCount &&
      this.totalCount < this.config.max
    ) {
      this.open().catch((error: PgError) => {
        // The oldest waiter learns why instead of waiting out its timeout.
        const waiter = this.waiters.shift();
        if (waiter === undefined) return;
        if (waiter.timer !== null) clearTimeout(waiter.timer);
        waiter.reject(error);
      });
    }
  }

  private async open(): Promise<void> {
    this.connecting++;
    let connection: BackendConnection;
    try {
      connection = await this.connectFn({
        host: this.key.host,
        port: this.key.port,
        database: this.key.database,
        user: this.key.user,
        connectTimeoutMs: this.config.connectTimeoutMs,
        ...this.credentials,
      });
    } catch (error) {
      this.connecting--;
      this.counters.connectFailures++;
      this.notifyDrained();
      throw error;
    }
    this.connecting--;
    this.counters.created++;
    const slot: Slot = { connection, state: SlotState.idle, idleSince: Date.now(), unsubscribe: () => {} };
    slot.unsubscribe = connection.onBroken(() => this.onBroken(slot));
    this.slots.set(connection, slot);
    this.offer(slot);
  }

  private onBroken(slot: Slot): void {
    switch (slot.state) {
      case SlotState.idle: {
        const index = this.idle.indexOf(slot);
        if (index !== -1) this.idle.splice(index, 1);
        void this.retire(slot, false);
        return;
      }
      case SlotState.busy:
      case SlotState.resetting:
        // The lease holder or the reset sees the failure and gives the connection up.
        return;
      default:
        assertNever(slot.state);
    }
  }

  private reset(slot: Slot, kind: ResetKind): void {
    slot.state = SlotState.resetting;
    this.resettingCount++;
    const connection = slot.connection;
    const timeoutMs = this.config.resetTimeoutMs;
    const run = async (): Promise<void> => {
      if (connection.txStatus !== "I") await connection.simpleQuery("ROLLBACK", { timeoutMs });
      // DISCARD ALL refuses to run inside a transaction block, so it is sent alone.
      await connection.simpleQuery(kind === ResetKind.full ? "DISCARD ALL" : RESET_SETTINGS, { timeoutMs });
    };
    run().then(
      () => {
        this.resettingCount--;
        this.counters.resets++;
        connection.markClean(kind);
        if (!connection.usable) return void this.retire(slot, false);
        this.offer(slot);
      },
      () => {
        this.resettingCount--;
        void this.retire(slot, false);
      },
    );
  }

  private expire(node: QueueNode<Waiter>): void {
    if (!this.waiters.remove(node)) return;
    this.counters.timeouts++;
    node.value.reject(poolCheckoutTimeout(this.name, this.config.checkoutTimeoutMs));
  }

  private expired(slot: Slot): boolean {
    const lifetime = this.config.maxLifetimeMs;
    return lifetime > 0 && Date.now() - slot.connection.createdAt >= lifetime;
  }

  /** Removes a connection from the pool and closes it (politely when its state allows). */
  private async retire(slot: Slot, graceful: boolean): Promise<void> {
    if (!this.slots.delete(slot.connection)) return;
    slot.unsubscribe();
    this.counters.discarded++;
    if (graceful) await slot.connection.close().catch(() => undefined);
    else slot.connection.destroy();
    this.notifyDrained();
    if (!this.closing) {
      this.grow();
      this.fillToMin();
    }
  }

  private fillToMin(): void {
    if (this.closing) return;
    const missing = this.config.min - this.totalCount;
    for (let i = 0; i < missing; i++) this.open().catch(() => undefined);
  }

  /** Closes idle connections beyond `min` idle longer than `idleTimeoutMs`, and expired ones. */
  private sweep(): void {
    const now = Date.now();
    let removable = this.totalCount - this.config.min;
    // The stack's bottom holds the connections idle the longest.
    for (let i = 0; i < this.idle.length; ) {
      const slot = this.idle[i]!;
      const idleTooLong = removable > 0 && now - slot.idleSince >= this.config.idleTimeoutMs;
      if (idleTooLong || this.expired(slot) || !slot.connection.usable) {
        this.idle.splice(i, 1);
        removable--;
        void this.retire(slot, slot.connection.usable);
        continue;
      }
      i++;
    }
  }

  private notifyDrained(): void {
    if (!this.closing || this.slots.size > 0 || this.connecting > 0) return;
    for (const listener of this.drainedListeners) listener();
    this.drainedListeners.clear();
  }
}
