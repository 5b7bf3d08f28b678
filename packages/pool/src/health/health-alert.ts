import type { BackendRole } from "./backend-endpoint.js";

/** The facts the monitor raises as alerts. */
export const HealthAlertKind = {
  /** Three probes failed in a row, or the data path reported a failed connection. */
  backendDown: "backend-down",
  /** A replica more than `maxReplicaLagBytes` behind its primary: it serves no reads. */
  replicaLagging: "replica-lagging",
  /** A primary reporting recovery, or a replica that is not in recovery. */
  roleMismatch: "role-mismatch",
} as const;
export type HealthAlertKind = (typeof HealthAlertKind)[keyof typeof HealthAlertKind];

/** One alert: a fact, stated once, with when it began. */
export interface HealthAlert {
  readonly kind: HealthAlertKind;
  readonly region: string;
  readonly role: BackendRole;
  readonly address: string;
  /** Clock time the alert was first raised; unchanged while it holds. */
  readonly since: number;
  readonly message: string;
  /** For `replica-lagging`: the lag when last measured. */
  readonly lagBytes?: bigint | undefined;
}

/** Identifies an alert across recomputations: one per kind and backend. */
export function alertKey(kind: HealthAlertKind, address: string): string {
  return `${kind} ${address}`;
}
