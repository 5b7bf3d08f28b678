/**
 * A shared directory's proxy by the age of its heartbeat (this proxy's own row: its lease's age):
 * `held` under lease_ms; `lapsing` past it, when that proxy refuses geo-partitioned statements
 * itself; `lapsed` past 1.5 x lease_ms (or never heard from), when movers stop waiting for it.
 * SHOW PEERS' `lease` column, the dashboard's Peers table and `geoproxy_directory_peers{lease}`.
 *
 * @example
 * ```ts
 * leaseState(5200, 5000); // "lapsing"
 * ```
 */
export type LeaseState = "held" | "lapsing" | "lapsed";

export function leaseState(ageMs: number | undefined, leaseMs: number): LeaseState {
  return ageMs === undefined || ageMs >= 1.5 * leaseMs ? "lapsed" : ageMs >= leaseMs ? "lapsing" : "held";
}
