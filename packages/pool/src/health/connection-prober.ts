import { BackendConnection, type SimpleQueryResult } from "../backend-connection.js";
import type { ConnectFunction } from "../pool-config.js";
import { type BackendEndpoint, endpointAddress } from "./backend-endpoint.js";
import { probeAbandoned, probeAnswerUnexpected } from "./health-errors.js";
import type { HealthProber, ProbeReading } from "./health-prober.js";
import { PROBE_SQL } from "./health-prober.js";
import { parseLsn } from "./lsn.js";

export interface ConnectionProberOptions {
  /** Sent as `application_name`, so probes are easy to tell apart in pg_stat_activity. */
  readonly applicationName?: string | undefined;
  /** Replaces `BackendConnection.connect`, e.g. to add TLS (`upgrade`) or metrics. */
  readonly connect?: ConnectFunction | undefined;
}

export const HEALTH_APPLICATION_NAME = "geoproxy health";

/**
 * The real prober: one dedicated connection per backend, kept open between probes and never
 * shared with client traffic, so a full pool can never starve the health check and the check never
 * takes a client's slot. A failed or timed-out probe destroys its connection; the next probe
 * connects afresh, which is what tells "server back" from "server still down".
 */
export class ConnectionProber implements HealthProber {
  private readonly connections = new Map<string, BackendConnection>();
  private readonly applicationName: string;
  private readonly connect: ConnectFunction;
  private closed = false;

  constructor(options: ConnectionProberOptions = {}) {
    this.applicationName = options.applicationName ?? HEALTH_APPLICATION_NAME;
    this.connect = options.connect ?? ((connectOptions) => BackendConnection.connect(connectOptions));
  }

  async probe(endpoint: BackendEndpoint, timeoutMs: number): Promise<ProbeReading> {
    const address = endpointAddress(endpoint);
    const deadline = Date.now() + timeoutMs;
    let connection = this.connections.get(address);
    if (connection !== undefined && !connection.usable) {
      connection.destroy();
      this.connections.delete(address);
      connection = undefined;
    }
    if (connection === undefined) {
      connection = await this.connect({
        host: endpoint.host,
        port: endpoint.port,
        database: endpoint.database,
        user: endpoint.user,
        password: endpoint.password,
        applicationName: this.applicationName,
        connectTimeoutMs: timeoutMs,
      });
      if (this.closed) {
        connection.destroy();
        throw probeAbandoned(address);
      }
      this.connections.set(address, connection);
    }
    try {
      const result = await connection.simpleQuery(PROBE_SQL, {
        timeoutMs: Math.max(1, deadline - Date.now()),
      });
      return readingOf(result, address);
    } catch (error) {
      connection.destroy();
      if (this.connections.get(address) === connection) this.connections.delete(address);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((connection) => connection.close().catch(() => connection.destroy())));
  }
}

function readingOf(result: SimpleQueryResult, address: string): ProbeReading {
  const row = result.rows[0];
  if (result.rows.length !== 1 || row === undefined || row.length !== 2)
    throw probeAnswerUnexpected(address, `${result.rows.length} row(s) of ${row?.length ?? 0} column(s)`);
  const [recovery, lsn] = row;
  if (recovery !== "t" && recovery !== "f")
    throw probeAnswerUnexpected(address, `pg_is_in_recovery() returned ${String(recovery)}`);
  return { inRecovery: recovery === "t", lsn: lsn === null || lsn === undefined ? undefined : parseLsn(lsn) };
}
