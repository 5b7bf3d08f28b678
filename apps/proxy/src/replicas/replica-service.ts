import type { GeoConfig, Topology } from "@geo/core";
import { DEFAULTS } from "@geo/core";
import { type ConnectFunction, ConnectionProber, HealthMonitor } from "@geo/pool";
import { backendEndpoints } from "../observability/backend-probes.js";
import { ReplicaPools } from "./replica-pools.js";

/**
 * Everything the proxy needs to send reads to replicas: one health monitor probing every backend
 * (primaries included, since a replica's lag is measured against its primary's position) and one
 * pool per replica endpoint. Created only when the topology lists a replica, so a proxy without
 * replicas sends no probe traffic at all (the fake-backend tests record every statement).
 */
export class ReplicaService {
  private constructor(
    readonly health: HealthMonitor,
    readonly pools: ReplicaPools,
    /** `[routing] max_replica_lag_bytes`. */
    readonly maxLagBytes: number,
  ) {}

  /**
   * The service for `topology`, or undefined when it lists no replica. Probes log in as the pools
   * do (the endpoint's `user`, or `postgres`), through `connect`, so backend TLS applies to them too.
   */
  static create(
    config: GeoConfig,
    topology: Topology,
    connect?: ConnectFunction,
  ): ReplicaService | undefined {
    const pools = new ReplicaPools(topology, config, connect);
    if (!pools.any) return undefined;
    const routing = config.routing;
    const d = DEFAULTS.routing;
    const maxLagBytes = routing.maxReplicaLagBytes ?? d.maxReplicaLagBytes;
    const health = new HealthMonitor({
      endpoints: backendEndpoints(topology),
      intervalMs: routing.healthIntervalMs ?? d.healthIntervalMs,
      probeTimeoutMs: routing.healthProbeTimeoutMs ?? d.healthProbeTimeoutMs,
      failuresToDown: routing.healthFailuresToDown ?? d.healthFailuresToDown,
      maxReplicaLagBytes: maxLagBytes,
      prober: new ConnectionProber(connect === undefined ? {} : { connect }),
    });
    return new ReplicaService(health, pools, maxLagBytes);
  }

  /** Probes every backend once (so the first reads know where they may go), then every interval. */
  start(): Promise<void> {
    return this.health.start();
  }

  async close(timeoutMs: number): Promise<void> {
    await this.health.stop();
    await this.pools.close(timeoutMs);
  }
}
