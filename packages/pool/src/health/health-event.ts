import type { BackendHealth, HealthState } from "./backend-health.js";
import type { HealthAlert } from "./health-alert.js";

/** Why a backend's state changed. */
export const StateChangeCause = {
  probe: "probe",
  probeFailures: "probe-failures",
  reportedFailure: "reported-failure",
} as const;
export type StateChangeCause = (typeof StateChangeCause)[keyof typeof StateChangeCause];

/** What the monitor announces to `subscribe` listeners. */
export type HealthEvent =
  | {
      readonly type: "state";
      readonly backend: BackendHealth;
      readonly previous: HealthState;
      readonly cause: StateChangeCause;
    }
  | { readonly type: "drain"; readonly backend: BackendHealth }
  | { readonly type: "alert-raised"; readonly alert: HealthAlert }
  | { readonly type: "alert-cleared"; readonly alert: HealthAlert }
  | { readonly type: "round"; readonly round: number; readonly at: number };
