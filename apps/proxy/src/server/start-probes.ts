import type { GeoConfig, Topology } from "@geo/core";
import { PgError } from "@geo/proto";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { startupErrors } from "./startup-error.js";

/** What one region's primary answered to the start-up connection. */
export interface RegionProbe {
  readonly region: string;
  readonly home: boolean;
  /** `host:port` of the primary. */
  readonly endpoint: string;
  /** Its ParameterStatus values; null when it could not be reached. */
  readonly parameters: ReadonlyMap<string, string> | null;
  /** Why it could not be reached; null when it answered. */
  readonly error: string | null;
}

/**
 * Opens (and returns to the pool) one connection per region's primary, in parallel, and reports
 * each outcome; never throws for an unreachable region (see `startRefusal` for when that stops
 * the start).
 */
export async function probeRegions(
  topology: Topology,
  pools: RegionPools,
  log: Logger,
): Promise<RegionProbe[]> {
  return Promise.all(
    topology.regions.map(async (region): Promise<RegionProbe> => {
      const endpoint = `${region.primary.host}:${region.primary.port}`;
      const base = { region: region.id, home: region.home, endpoint };
      try {
        const lease = await pools.acquire(region.id, region.primary.user ?? "postgres");
        const parameters = new Map(lease.connection.parameters);
        lease.release();
        log.info({ region: region.id, backend: endpoint }, "region reachable");
        return { ...base, parameters, error: null };
      } catch (error) {
        // The pool's own message names the address and the cause, not the region it was wrapped with.
        const cause = error instanceof PgError && error.cause instanceof PgError ? error.cause : error;
        const message = cause instanceof PgError ? cause.message : String(cause);
        return { ...base, parameters: null, error: message };
      }
    }),
  );
}

/**
 * The lines the start is refused with, or null when the proxy may start with the regions that
 * answered. The home region must answer: every client's login reports its ParameterStatus values
 * (server_version, encodings, TimeZone, DateStyle) and checks the client's startup settings there,
 * session pooling gives each client a home connection, and multi-region answers and the table
 * decision logs live there. Values borrowed from another region could differ and would stay wrong
 * for the life of each client's connection, so that cannot be deferred. Any other region may be
 * down unless `[server] require_all_regions_at_start` says otherwise.
 */
export function startRefusal(config: GeoConfig, probes: readonly RegionProbe[]): string[] | null {
  const down = probes.filter((probe) => probe.error !== null);
  if (down.length === 0) return null;
  const homeDown = down.some((probe) => probe.home);
  if (!homeDown && !config.server.requireAllRegionsAtStart) return null;
  const lines = startupErrors(
    down.map((probe) => ({ region: probe.region, endpoint: probe.endpoint, message: probe.error ?? "" })),
  );
  return lines.map((line, i) =>
    down[i]!.home
      ? `${line} (the home region must answer at start: every client's login reports its server settings)`
      : !homeDown
        ? `${line} (${config.file}: [server] require_all_regions_at_start = true refuses to start without it)`
        : line,
  );
}
