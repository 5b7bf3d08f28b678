import { readFileSync } from "node:fs";
import type { Endpoint, GeoConfig } from "@geo/core";
import { backendTlsUpgrade, type TransportUpgrade } from "@geo/pool";

/**
 * The TLS hook for every backend, keyed by `host:port`: the endpoint's own `sslmode` /
 * `sslrootcert`, else `[tls] backend_sslmode` / `backend_ca`. CA files are read once, at start;
 * an unreadable one is an Error naming the field.
 */
export function backendUpgrades(config: GeoConfig): Map<string, TransportUpgrade | undefined> {
  const upgrades = new Map<string, TransportUpgrade | undefined>();
  const cas = new Map<string, Buffer>();
  const readCa = (path: string, field: string): Buffer => {
    let ca = cas.get(path);
    if (ca === undefined) {
      try {
        ca = readFileSync(path);
      } catch (error) {
        throw new Error(
          `${field}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      cas.set(path, ca);
    }
    return ca;
  };
  const add = (endpoint: Endpoint, where: string) => {
    const sslmode = endpoint.sslmode ?? config.tls.backendSslmode;
    const caPath = endpoint.sslrootcert ?? config.tls.backendCa;
    const field = endpoint.sslrootcert !== undefined ? `${where}.sslrootcert` : "tls.backend_ca";
    const verifies = sslmode === "verify-ca" || sslmode === "verify-full";
    const ca = verifies && caPath !== undefined ? readCa(caPath, field) : undefined;
    upgrades.set(
      `${endpoint.host}:${endpoint.port}`,
      backendTlsUpgrade({ sslmode, host: endpoint.host, ca }),
    );
  };
  config.regions.forEach((region, i) => {
    add(region.primary, `topology.regions[${i}].primary`);
    for (const [j, replica] of region.replicas.entries())
      add(replica, `topology.regions[${i}].replicas[${j}]`);
  });
  return upgrades;
}
