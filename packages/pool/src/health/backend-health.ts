import type { BackendRole } from "./backend-endpoint.js";

/** Whether a backend serves: unknown until its first probe settles it. */
export const HealthState = {
  unknown: "unknown",
  up: "up",
  down: "down",
} as const;
export type HealthState = (typeof HealthState)[keyof typeof HealthState];

/** A snapshot of one backend as SHOW HEALTH shows it. */
export interface BackendHealth {
  readonly region: string;
  readonly role: BackendRole;
  /** `host:port` */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  readonly state: HealthState;
  /** `state === "up"` */
  readonly up: boolean;
  /** From the last successful probe; undefined before one. */
  readonly inRecovery: boolean | undefined;
  /** A primary in recovery, or a replica that is not: the server plays another role than the topology's. */
  readonly roleMismatch: boolean;
  /** Current WAL position (primary) or last replayed one (replica), from the last successful probe. */
  readonly lsn: bigint | undefined;
  /**
   * Replicas: its primary's last position minus its own, clamped at 0. Undefined for primaries and
   * while either position is unknown or the replica is not in recovery.
   */
  readonly lagBytes: bigint | undefined;
  /** Clock time the last probe finished (either way). */
  readonly lastProbeAt: number | undefined;
  /** Clock time of the last successful probe. */
  readonly lastSuccessAt: number | undefined;
  readonly consecutiveFailures: number;
  /** Why the last probe (or the data path) failed; cleared by a successful probe. */
  readonly lastError: string | undefined;
  /** Taken out of service by DRAIN; only replicas can be. */
  readonly drained: boolean;
}
