import type { BackendEndpoint } from "./backend-endpoint.js";

/** What one successful probe learned about a backend. */
export interface ProbeReading {
  /** `pg_is_in_recovery()`: true on a standby (and on a primary that is not acting as one). */
  readonly inRecovery: boolean;
  /**
   * The WAL position: `pg_current_wal_lsn()` when not in recovery, `pg_last_wal_replay_lsn()` when
   * in recovery (the end of the last record replayed). Undefined when the server reports NULL.
   */
  readonly lsn: bigint | undefined;
}

/**
 * Probes backends. The monitor calls `probe` at most once at a time per backend and treats a
 * rejection as a failed probe; `close` releases whatever the prober holds.
 */
export interface HealthProber {
  probe(endpoint: BackendEndpoint, timeoutMs: number): Promise<ProbeReading>;
  close(): Promise<void>;
}

/**
 * One round trip answers both questions. The CASE keeps a standby from calling
 * `pg_current_wal_lsn()`, which raises 55000 during recovery.
 */
export const PROBE_SQL =
  "SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END";
