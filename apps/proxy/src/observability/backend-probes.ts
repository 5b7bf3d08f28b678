import type { EndpointStatus, RegionStatus } from "@geo/admin";
import type { GeoConfig, Topology } from "@geo/core";
import { type BackendEndpoint, type BackendHealth, HealthAlertKind, HealthMonitor } from "@geo/pool";
import type { Fact } from "./alert-book.js";
import { endpointName } from "./endpoint-health.js";

/** TLS modes the probe connections (which speak in clear) cannot satisfy. */
const TLS_REQUIRED = new Set(["require", "verify-ca", "verify-full"]);

/** Every backend of the topology as the health monitor names it. */
export function backendEndpoints(topology: Topology): BackendEndpoint[] {
  return topology.regions.flatMap((region) =>
    [region.primary, ...region.replicas].map((endpoint, index) => ({
      region: region.id,
      role: index === 0 ? ("primary" as const) : ("replica" as const),
      host: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      user: endpoint.user ?? "postgres",
      ...(endpoint.password === undefined ? {} : { password: endpoint.password }),
    })),
  );
}

/**
 * A health monitor probing every backend on connections of its own, or undefined where its probes
 * could not log in: they speak in clear, so a backend that requires TLS would read as down.
 */
export function probeMonitor(config: GeoConfig, topology: Topology): HealthMonitor | undefined {
  const needsTls =
    TLS_REQUIRED.has(config.tls.backendSslmode) ||
    config.regions.some((region) =>
      [region.primary, ...region.replicas].some(
        (endpoint) => endpoint.sslmode !== undefined && TLS_REQUIRED.has(endpoint.sslmode),
      ),
    );
  return needsTls ? undefined : new HealthMonitor({ endpoints: backendEndpoints(topology) });
}

function endpointStatus(health: BackendHealth): EndpointStatus {
  const primary = health.role === "primary";
  return {
    endpoint: health.address,
    role: health.role,
    health: health.state,
    inRecovery: health.inRecovery ?? null,
    lagBytes:
      health.lagBytes !== undefined
        ? Number(health.lagBytes)
        : primary && health.inRecovery === false
          ? 0
          : null,
    drained: health.drained,
  };
}

/** Every region (by id) with its backends as the monitor last probed them, primary first. */
export function probedRegions(monitor: HealthMonitor, topology: Topology): RegionStatus[] {
  return topology.regionIds.map((id) => {
    const region = topology.region(id)!;
    const endpoints = [region.primary, ...region.replicas].flatMap((endpoint) => {
      const health = monitor.status(endpointName(endpoint));
      return health === undefined ? [] : [endpointStatus(health)];
    });
    return { id, home: region.home, endpoints };
  });
}

/** The monitor's alerts as facts, under the admin port's snake_case names. */
export function probeFacts(monitor: HealthMonitor): Fact[] {
  return monitor.alerts().map((alert) => ({
    name: alertName(alert.kind),
    subject: alert.address,
    message: alert.message,
    since: new Date(alert.since),
  }));
}

function alertName(kind: HealthAlertKind): Fact["name"] {
  switch (kind) {
    case HealthAlertKind.backendDown:
      return "backend_down";
    case HealthAlertKind.replicaLagging:
      return "replica_lagging";
    case HealthAlertKind.roleMismatch:
      return "role_mismatch";
  }
}
