import { type BackendEndpoint, BackendRole, endpointAddress } from "./backend-endpoint.js";
import { type BackendHealth, HealthState } from "./backend-health.js";
import { ConnectionProber } from "./connection-prober.js";
import { alertKey, type HealthAlert, HealthAlertKind } from "./health-alert.js";
import { type HealthClock, systemClock } from "./health-clock.js";
import {
  drainNeedsReplica,
  duplicateBackend,
  duplicatePrimary,
  probeStillRunning,
  probeTimedOut,
  unknownBackend,
  unknownRegion,
} from "./health-errors.js";
import { type HealthEvent, StateChangeCause } from "./health-event.js";
import type { HealthProber, ProbeReading } from "./health-prober.js";
import { type ReplicaChoice, type ReplicaChoiceOptions, ReplicaRefusal } from "./replica-choice.js";
import { WriteFence } from "./write-fence.js";

export interface HealthMonitorOptions {
  /** Every backend of the topology: one primary per region, any number of replicas. */
  readonly endpoints: readonly BackendEndpoint[];
  /** Time between the starts of two probe rounds; 1000 when omitted. */
  readonly intervalMs?: number | undefined;
  /** A probe (connect included) that takes longer fails; `intervalMs` when omitted. */
  readonly probeTimeoutMs?: number | undefined;
  /** Consecutive failed probes that mark a backend down; 3 when omitted. */
  readonly failuresToDown?: number | undefined;
  /** Lag beyond which a replica raises the `replica-lagging` alert; no such alert when omitted. */
  readonly maxReplicaLagBytes?: bigint | number | undefined;
  /** How backends are probed; a `ConnectionProber` (application_name `geoproxy health`) when omitted. */
  readonly prober?: HealthProber | undefined;
  readonly clock?: HealthClock | undefined;
}

interface BackendRecord {
  readonly endpoint: BackendEndpoint;
  readonly address: string;
  state: HealthState;
  inRecovery: boolean | undefined;
  lsn: bigint | undefined;
  lagBytes: bigint | undefined;
  lastProbeAt: number | undefined;
  lastSuccessAt: number | undefined;
  /** The round of the last successful probe, for resolving write fences. */
  lastSuccessRound: number;
  consecutiveFailures: number;
  lastError: string | undefined;
  drained: boolean;
  inFlight: boolean;
}

interface RegionRecord {
  primary: BackendRecord | undefined;
  readonly replicas: BackendRecord[];
  /** Round-robin start among the region's replicas. */
  cursor: number;
  readonly fences: WriteFence[];
}

const roleMismatchOf = (record: BackendRecord): boolean =>
  record.inRecovery !== undefined && record.inRecovery !== (record.endpoint.role === BackendRole.replica);

/**
 * Watches every backend of the topology on connections of its own and answers the routing
 * questions of read/write splitting: which replica of a region may serve a read now, within a lag
 * bound and after a session's own writes.
 *
 * Probes run in rounds: every backend at once, then lag is computed from that round's positions,
 * write fences resolve, alerts are recomputed, and the next round starts `intervalMs` after this
 * one started.
 *
 * @example
 * ```ts
 * const health = new HealthMonitor({
 *   endpoints: [
 *     { region: "eu", role: "primary", host: "10.0.0.5", port: 5432, database: "app", user: "geo" },
 *     { region: "eu", role: "replica", host: "10.0.0.6", port: 5432, database: "app", user: "geo" },
 *   ],
 *   intervalMs: 1000,
 *   maxReplicaLagBytes: 16n << 20n,
 * });
 * await health.start(); // resolves after the first round
 * const replica = health.pickReplica("eu", { maxLagBytes: 16n << 20n, fence: session.fences.get("eu") });
 * // replica?.address, or undefined: use the primary
 * ```
 */
export class HealthMonitor {
  private readonly records: BackendRecord[] = [];
  private readonly byAddress = new Map<string, BackendRecord>();
  private readonly regions = new Map<string, RegionRecord>();
  private readonly listeners = new Set<(event: HealthEvent) => void>();
  private readonly activeAlerts = new Map<string, HealthAlert>();
  private readonly intervalMs: number;
  private readonly probeTimeoutMs: number;
  private readonly failuresToDown: number;
  private readonly maxReplicaLagBytes: bigint | undefined;
  private readonly prober: HealthProber;
  private readonly clock: HealthClock;
  private roundsStarted = 0;
  private roundChain: Promise<void> = Promise.resolve();
  private running = false;
  private timer: unknown;
  private stopping: Promise<void> | undefined;

  constructor(options: HealthMonitorOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? this.intervalMs;
    this.failuresToDown = options.failuresToDown ?? 3;
    this.maxReplicaLagBytes =
      options.maxReplicaLagBytes === undefined ? undefined : BigInt(options.maxReplicaLagBytes);
    this.prober = options.prober ?? new ConnectionProber();
    this.clock = options.clock ?? systemClock;
    for (const endpoint of options.endpoints) this.add(endpoint);
    for (const [region, entry] of this.regions) {
      if (entry.primary === undefined) throw unknownRegion(region);
    }
  }

  private add(endpoint: BackendEndpoint): void {
    const address = endpointAddress(endpoint);
    if (this.byAddress.has(address)) throw duplicateBackend(address);
    const record: BackendRecord = {
      endpoint,
      address,
      state: HealthState.unknown,
      inRecovery: undefined,
      lsn: undefined,
      lagBytes: undefined,
      lastProbeAt: undefined,
      lastSuccessAt: undefined,
      lastSuccessRound: 0,
      consecutiveFailures: 0,
      lastError: undefined,
      drained: false,
      inFlight: false,
    };
    let region = this.regions.get(endpoint.region);
    if (region === undefined) {
      region = { primary: undefined, replicas: [], cursor: 0, fences: [] };
      this.regions.set(endpoint.region, region);
    }
    switch (endpoint.role) {
      case BackendRole.primary:
        if (region.primary !== undefined)
          throw duplicatePrimary(endpoint.region, region.primary.address, address);
        region.primary = record;
        break;
      case BackendRole.replica:
        region.replicas.push(record);
        break;
      default:
        assertNever(endpoint.role);
    }
    this.records.push(record);
    this.byAddress.set(address, record);
  }

  /** Probes at once, then every `intervalMs`. Resolves when the first round has finished. */
  start(): Promise<void> {
    if (this.running || this.stopping !== undefined) return this.roundChain;
    this.running = true;
    return this.loop();
  }

  private loop(): Promise<void> {
    const startedAt = this.clock.now();
    const round = this.probeNow();
    const scheduleNext = () => {
      if (!this.running) return;
      const elapsed = this.clock.now() - startedAt;
      this.timer = this.clock.setTimeout(
        () => {
          this.timer = undefined;
          if (this.running) this.loop().catch(noop);
        },
        Math.max(0, this.intervalMs - elapsed),
      );
    };
    round.then(scheduleNext, scheduleNext);
    return round;
  }

  /**
   * Stops probing, waits for a round in flight, closes the probe connections and settles pending
   * write fences to undefined. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.running = false;
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      await this.roundChain;
      await this.prober.close();
      for (const region of this.regions.values()) {
        for (const fence of region.fences) fence.abandon();
        region.fences.length = 0;
      }
    })();
    return this.stopping;
  }

  /** Runs one probe round now (after any round in flight); resolves when it is done. */
  probeNow(): Promise<void> {
    const next = this.roundChain.then(() => this.runRound());
    this.roundChain = next.catch(() => undefined);
    return next;
  }

  private async runRound(): Promise<void> {
    const round = ++this.roundsStarted;
    await Promise.all(this.records.map((record) => this.probeOne(record, round)));
    this.computeLag();
    this.resolveFences();
    this.refreshAlerts();
    this.emit({ type: "round", round, at: this.clock.now() });
  }

  private async probeOne(record: BackendRecord, round: number): Promise<void> {
    if (record.inFlight) {
      this.recordFailure(record, probeStillRunning(record.address));
      return;
    }
    record.inFlight = true;
    let timer: unknown;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () => reject(probeTimedOut(record.address, this.probeTimeoutMs)),
        this.probeTimeoutMs,
      );
    });
    const probe = this.prober.probe(record.endpoint, this.probeTimeoutMs);
    void probe.then(
      () => {
        record.inFlight = false;
      },
      () => {
        record.inFlight = false;
      },
    );
    try {
      this.recordSuccess(record, await Promise.race([probe, timeout]), round);
    } catch (error) {
      this.recordFailure(record, error);
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  private recordSuccess(record: BackendRecord, reading: ProbeReading, round: number): void {
    const now = this.clock.now();
    record.inRecovery = reading.inRecovery;
    record.lsn = reading.lsn;
    record.lastProbeAt = now;
    record.lastSuccessAt = now;
    record.lastSuccessRound = round;
    record.consecutiveFailures = 0;
    record.lastError = undefined;
    this.setState(record, HealthState.up, StateChangeCause.probe);
  }

  private recordFailure(record: BackendRecord, error: unknown): void {
    record.lastProbeAt = this.clock.now();
    record.consecutiveFailures += 1;
    record.lastError = error instanceof Error ? error.message : String(error);
    if (record.consecutiveFailures >= this.failuresToDown)
      this.setState(record, HealthState.down, StateChangeCause.probeFailures);
  }

  private setState(record: BackendRecord, state: HealthState, cause: StateChangeCause): void {
    const previous = record.state;
    if (previous === state) return;
    record.state = state;
    this.emit({ type: "state", backend: this.snapshot(record), previous, cause });
  }

  private computeLag(): void {
    for (const region of this.regions.values()) {
      // A primary whose last probe failed may have moved on since: measuring against its old
      // position would understate every replica's lag, so the lag is unknown until it answers.
      const primary = region.primary;
      const primaryLsn = primary !== undefined && primary.consecutiveFailures === 0 ? primary.lsn : undefined;
      for (const replica of region.replicas) {
        replica.lagBytes =
          primaryLsn === undefined || replica.lsn === undefined || replica.inRecovery !== true
            ? undefined
            : primaryLsn > replica.lsn
              ? primaryLsn - replica.lsn
              : 0n;
      }
    }
  }

  private resolveFences(): void {
    for (const region of this.regions.values()) {
      const primary = region.primary;
      if (region.fences.length === 0 || primary === undefined || primary.lsn === undefined) continue;
      let kept = 0;
      for (const fence of region.fences) {
        // Only a probe that started after the fence was taken can have seen the write's WAL.
        if (primary.lastSuccessRound > fence.afterRound) fence.resolveAt(primary.lsn);
        else region.fences[kept++] = fence;
      }
      region.fences.length = kept;
    }
  }

  /**
   * Takes a fence for a write the caller's session just committed in `region` (call it once the
   * commit's reply arrived, not before: the position must cover the commit record). Pass it to
   * `pickReplica` for the session's later reads in that region; keep only the latest per region.
   */
  writeFence(region: string): WriteFence {
    const entry = this.regions.get(region);
    if (entry === undefined) throw unknownRegion(region);
    const fence = new WriteFence(region, this.roundsStarted);
    if (this.stopping !== undefined) fence.abandon();
    else entry.fences.push(fence);
    return fence;
  }

  /**
   * A healthy replica of `region` to send a read to, or undefined to use the primary. Qualifies: up,
   * not drained, in recovery, its primary up, lag known and within `maxLagBytes`, and replayed at
   * least to `minLsn` and to the fence's position (an unresolved fence qualifies no replica).
   * Qualifying replicas take turns.
   */
  pickReplica(region: string, options: ReplicaChoiceOptions): BackendHealth | undefined {
    const entry = this.regionFor(region, options);
    if (entry === undefined) return undefined;
    const chosen = this.firstQualified(entry, options);
    if (chosen === undefined) return undefined;
    entry.cursor = (chosen + 1) % entry.replicas.length;
    return this.snapshot(entry.replicas[chosen] as BackendRecord);
  }

  /**
   * Like `pickReplica`, also saying why each replica was passed over (for ROUTE and logs). It does
   * not take a turn: the next `pickReplica` answers the replica named here.
   */
  explainReplicaChoice(region: string, options: ReplicaChoiceOptions): ReplicaChoice {
    const entry = this.regionFor(region, options);
    if (entry === undefined) throw unknownRegion(region);
    const chosen = this.firstQualified(entry, options);
    return {
      chosen: chosen === undefined ? undefined : this.snapshot(entry.replicas[chosen] as BackendRecord),
      replicas: entry.replicas.map((replica) => ({
        address: replica.address,
        refusal: this.refusalOf(entry, replica, options),
      })),
    };
  }

  private regionFor(region: string, options: ReplicaChoiceOptions): RegionRecord | undefined {
    if (options.fence !== undefined && options.fence.region !== region)
      throw new RangeError(`a write fence of region ${options.fence.region} was passed for region ${region}`);
    return this.regions.get(region);
  }

  private firstQualified(entry: RegionRecord, options: ReplicaChoiceOptions): number | undefined {
    const count = entry.replicas.length;
    for (let offset = 0; offset < count; offset++) {
      const index = (entry.cursor + offset) % count;
      if (this.refusalOf(entry, entry.replicas[index] as BackendRecord, options) === undefined) return index;
    }
    return undefined;
  }

  private refusalOf(
    region: RegionRecord,
    replica: BackendRecord,
    options: ReplicaChoiceOptions,
  ): ReplicaRefusal | undefined {
    if (replica.state !== HealthState.up) return ReplicaRefusal.notUp;
    if (replica.drained) return ReplicaRefusal.drained;
    if (replica.inRecovery !== true) return ReplicaRefusal.notInRecovery;
    if (region.primary?.state !== HealthState.up) return ReplicaRefusal.primaryDown;
    if (replica.lagBytes === undefined || replica.lsn === undefined) return ReplicaRefusal.lagUnknown;
    if (replica.lagBytes > BigInt(options.maxLagBytes)) return ReplicaRefusal.tooFarBehind;
    const fence = options.fence;
    if (fence !== undefined) {
      const fenceLsn = fence.lsn;
      if (fenceLsn === undefined) return ReplicaRefusal.writeNotYetProbed;
      if (replica.lsn < fenceLsn) return ReplicaRefusal.behindWrite;
    }
    if (options.minLsn !== undefined && replica.lsn < options.minLsn) return ReplicaRefusal.behindWrite;
    return undefined;
  }

  /**
   * The data path could not connect to (or lost) this backend: it is down at once, without waiting
   * for three probes. The next successful probe brings it back up.
   */
  reportFailure(endpoint: string | { readonly host: string; readonly port: number }, reason?: unknown): void {
    const record = this.recordOf(endpoint);
    if (reason !== undefined) record.lastError = reason instanceof Error ? reason.message : String(reason);
    this.setState(record, HealthState.down, StateChangeCause.reportedFailure);
    this.refreshAlerts();
  }

  /** DRAIN: takes a replica out of read service (probes go on). Idempotent; throws for a primary. */
  drain(address: string): BackendHealth {
    return this.setDrained(address, true);
  }

  /** UNDRAIN: puts a drained replica back. Idempotent. */
  undrain(address: string): BackendHealth {
    return this.setDrained(address, false);
  }

  private setDrained(address: string, drained: boolean): BackendHealth {
    const record = this.recordOf(address);
    if (record.endpoint.role !== BackendRole.replica)
      throw drainNeedsReplica(address, record.endpoint.region);
    if (record.drained !== drained) {
      record.drained = drained;
      this.emit({ type: "drain", backend: this.snapshot(record) });
    }
    return this.snapshot(record);
  }

  /** One backend, by `host:port` or endpoint; undefined when the topology does not hold it. */
  status(endpoint: string | { readonly host: string; readonly port: number }): BackendHealth | undefined {
    const record = this.byAddress.get(typeof endpoint === "string" ? endpoint : endpointAddress(endpoint));
    return record === undefined ? undefined : this.snapshot(record);
  }

  /**
   * The region's primary, for the data path's last check: a read with no qualifying replica goes
   * here, and when it is down the read fails (`regionPrimaryDown`) rather than trying a replica.
   */
  primaryOf(region: string): BackendHealth | undefined {
    const primary = this.regions.get(region)?.primary;
    return primary === undefined ? undefined : this.snapshot(primary);
  }

  /** Every backend, in configuration order (SHOW HEALTH). */
  list(): BackendHealth[] {
    return this.records.map((record) => this.snapshot(record));
  }

  /** The alerts that hold now, oldest first (SHOW ALERTS). */
  alerts(): HealthAlert[] {
    return [...this.activeAlerts.values()].sort((a, b) => a.since - b.since);
  }

  /** Listens to state, drain, alert and round events; returns the unsubscribe function. */
  subscribe(listener: (event: HealthEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private emit(event: HealthEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the monitor's bookkeeping must go on.
      }
    }
  }

  private recordOf(endpoint: string | { readonly host: string; readonly port: number }): BackendRecord {
    const address = typeof endpoint === "string" ? endpoint : endpointAddress(endpoint);
    const record = this.byAddress.get(address);
    if (record === undefined) throw unknownBackend(address);
    return record;
  }

  private refreshAlerts(): void {
    const now = this.clock.now();
    const current = new Map<string, HealthAlert>();
    const raise = (record: BackendRecord, kind: HealthAlertKind, message: string, lagBytes?: bigint) => {
      const key = alertKey(kind, record.address);
      const since = this.activeAlerts.get(key)?.since ?? now;
      const { region, role } = record.endpoint;
      current.set(key, {
        kind,
        region,
        role,
        address: record.address,
        since,
        message,
        ...(lagBytes === undefined ? {} : { lagBytes }),
      });
    };
    for (const record of this.records) {
      const { region, role } = record.endpoint;
      if (record.state === HealthState.down) {
        raise(
          record,
          HealthAlertKind.backendDown,
          `${role} ${record.address} of region "${region}" is down${record.lastError === undefined ? "" : `: ${record.lastError}`}`,
        );
        continue;
      }
      if (record.state !== HealthState.up) continue;
      if (roleMismatchOf(record)) {
        raise(
          record,
          HealthAlertKind.roleMismatch,
          role === BackendRole.primary
            ? `primary ${record.address} of region "${region}" is in recovery: it is acting as a standby`
            : `replica ${record.address} of region "${region}" is not in recovery: it was promoted or is not a standby`,
        );
      }
      if (
        this.maxReplicaLagBytes !== undefined &&
        record.lagBytes !== undefined &&
        record.lagBytes > this.maxReplicaLagBytes
      ) {
        raise(
          record,
          HealthAlertKind.replicaLagging,
          `replica ${record.address} of region "${region}" is ${record.lagBytes} bytes behind its primary (at most ${this.maxReplicaLagBytes} serve reads)`,
          record.lagBytes,
        );
      }
    }
    for (const [key, alert] of this.activeAlerts) {
      if (!current.has(key)) this.emit({ type: "alert-cleared", alert });
    }
    const previous = new Set(this.activeAlerts.keys());
    this.activeAlerts.clear();
    for (const [key, alert] of current) {
      this.activeAlerts.set(key, alert);
      if (!previous.has(key)) this.emit({ type: "alert-raised", alert });
    }
  }

  private snapshot(record: BackendRecord): BackendHealth {
    const { region, role, host, port } = record.endpoint;
    return {
      region,
      role,
      address: record.address,
      host,
      port,
      state: record.state,
      up: record.state === HealthState.up,
      inRecovery: record.inRecovery,
      roleMismatch: roleMismatchOf(record),
      lsn: record.lsn,
      lagBytes: record.lagBytes,
      lastProbeAt: record.lastProbeAt,
      lastSuccessAt: record.lastSuccessAt,
      consecutiveFailures: record.consecutiveFailures,
      lastError: record.lastError,
      drained: record.drained,
    };
  }
}

function noop(): void {}

function assertNever(value: never): never {
  throw new Error(`unexpected backend role: ${String(value)}`);
}
