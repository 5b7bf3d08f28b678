/** How the proxy decided to run a statement; the `plan` label of the latency histogram. */
export const PLAN_KINDS = [
  "one_region",
  "scatter",
  "distributed_write",
  "each_region",
  "console",
  "refused",
] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];

/** How a read that ran in several regions was finished; the `finish` label. */
export const READ_FINISHES = ["merged_in_proxy", "finished_in_home", "gathered"] as const;
export type ReadFinish = (typeof READ_FINISHES)[number];

/** How a transaction ended; the `outcome` label. `in_doubt`: decided, not yet acknowledged everywhere. */
export const TRANSACTION_OUTCOMES = ["one_phase", "two_phase_committed", "aborted", "in_doubt"] as const;
export type TransactionOutcome = (typeof TRANSACTION_OUTCOMES)[number];

/** A backend's health as the proxy's probes last saw it. */
export const BACKEND_HEALTHS = ["up", "down", "unknown"] as const;
export type BackendHealth = (typeof BACKEND_HEALTHS)[number];

/** The role the topology gives an endpoint. */
export const ENDPOINT_ROLES = ["primary", "replica"] as const;
export type EndpointRole = (typeof ENDPOINT_ROLES)[number];

/** Where a key stands in the directory. `unlisted`: no entry; the region is where it would be created. */
export const KEY_STATES = ["resident", "moving", "unlisted"] as const;
export type KeyState = (typeof KEY_STATES)[number];

/**
 * A shared directory's proxy by the age of its heartbeat (this proxy's own: of its lease): `held`
 * under lease_ms; `lapsing` past it, when that proxy refuses geo-partitioned statements itself;
 * `lapsed` past 1.5 x lease_ms, when movers stop waiting for it. The `lease` label.
 */
export const LEASE_STATES = ["held", "lapsing", "lapsed"] as const;
export type LeaseState = (typeof LEASE_STATES)[number];

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
