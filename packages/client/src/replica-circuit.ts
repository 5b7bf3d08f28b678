/** Where the replica stands: `absent` when none is configured (single-pool mode). */
export const REPLICA_STATES = ["absent", "healthy", "tripped", "probing"] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

/** What a read should do right now. `probe`: use the primary, and start the one probe that is due. */
export type ReadRoute = "replica" | "primary" | "probe";

export interface CircuitTiming {
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
}

/** A read-only view of the circuit, for health endpoints and tests. */
export interface ReplicaHealth {
  readonly state: ReplicaState;
  /** The current backoff window; undefined while healthy or absent. */
  readonly windowMs: number | undefined;
  /** Clock time from which the next read may probe; undefined unless tripped. */
  readonly retryAt: number | undefined;
  /** The error that tripped the circuit or failed the last probe. */
  readonly lastError: unknown;
  /** Probes started since the cluster opened (start-up pings excluded). */
  readonly probes: number;
}

type Phase =
  | { readonly state: "absent" }
  | { readonly state: "healthy" }
  | {
      readonly state: "tripped";
      readonly windowMs: number;
      readonly retryAt: number;
      readonly since: number;
      readonly error: unknown;
    }
  | { readonly state: "probing"; readonly windowMs: number; readonly since: number; readonly error: unknown };

function assertNever(value: never): never {
  throw new Error(`unexpected replica state ${JSON.stringify(value)}`);
}

/**
 * The replica's health as a circuit breaker driven by reads, with no timer of its own: nothing
 * runs while nobody reads, and a healthy replica costs one field comparison per read.
 *
 * healthy --trip--> tripped --(window over, next read)--> probing --ok--> healthy
 *                      ^                                     |
 *                      +------- failed: window doubles ------+   (clamped to [min, max])
 */
export class ReplicaCircuit {
  #phase: Phase;
  #probes = 0;

  constructor(
    configured: boolean,
    private readonly timing: CircuitTiming,
    private readonly now: () => number,
  ) {
    this.#phase = configured ? { state: "healthy" } : { state: "absent" };
  }

  route(): ReadRoute {
    const phase = this.#phase;
    switch (phase.state) {
      case "healthy":
        return "replica";
      case "absent":
      case "probing":
        return "primary";
      case "tripped":
        if (this.now() < phase.retryAt) return "primary";
        this.#phase = { state: "probing", windowMs: phase.windowMs, since: phase.since, error: phase.error };
        this.#probes++;
        return "probe";
      default:
        return assertNever(phase);
    }
  }

  /** Opens the circuit on a healthy replica; returns the window, or undefined when nothing changed. */
  trip(error: unknown): number | undefined {
    if (this.#phase.state !== "healthy") return undefined;
    const now = this.now();
    const windowMs = this.timing.retryMinMs;
    this.#phase = { state: "tripped", windowMs, retryAt: now + windowMs, since: now, error };
    return windowMs;
  }

  /** Closes the circuit after a good probe; returns how long the replica was out of use. */
  probeSucceeded(): number {
    const phase = this.#phase;
    if (phase.state !== "probing") return 0;
    this.#phase = { state: "healthy" };
    return this.now() - phase.since;
  }

  /** Keeps the circuit open for a doubled window after a bad probe; returns that window. */
  probeFailed(error: unknown): number {
    const phase = this.#phase;
    if (phase.state !== "probing") return 0;
    const windowMs = Math.min(Math.max(phase.windowMs * 2, this.timing.retryMinMs), this.timing.retryMaxMs);
    this.#phase = { state: "tripped", windowMs, retryAt: this.now() + windowMs, since: phase.since, error };
    return windowMs;
  }

  health(): ReplicaHealth {
    const phase = this.#phase;
    switch (phase.state) {
      case "absent":
      case "healthy":
        return {
          state: phase.state,
          windowMs: undefined,
          retryAt: undefined,
          lastError: undefined,
          probes: this.#probes,
        };
      case "tripped":
        return {
          state: phase.state,
          windowMs: phase.windowMs,
          retryAt: phase.retryAt,
          lastError: phase.error,
          probes: this.#probes,
        };
      case "probing":
        return {
          state: phase.state,
          windowMs: phase.windowMs,
          retryAt: undefined,
          lastError: phase.error,
          probes: this.#probes,
        };
      default:
        return assertNever(phase);
    }
  }
}
