import type { BackendHealth, RegionStatus } from "@geo/admin";
import type { Endpoint, Topology } from "@geo/core";
import type { PoolStats } from "@geo/pool";

interface PrimaryRecord {
  readonly region: string;
  readonly endpoint: string;
  health: BackendHealth;
  /** When the current health was first seen. */
  since: Date;
  created: number;
  connectFailures: number;
}

/** `host:port`, the endpoint label of every series and row. */
export function endpointName(endpoint: Pick<Endpoint, "host" | "port">): string {
  return `${endpoint.host}:${endpoint.port}`;
}

/**
 * Health of each region's primary as the pools see it, until a health monitor probes backends
 * on connections of its own: a primary is up once one of its pools opened a connection, down
 * when an attempt to open one failed since (and none succeeded), and the home readiness check
 * (`/healthz`) says the same of the home primary. A primary starts as its start-up connection
 * found it: up, or down for a region that did not answer (`downAtStart`), until a pool opens a
 * connection to it. Replicas carry no traffic yet and stay `unknown`. Regions are listed by id,
 * as SHOW REGIONS lists them.
 */
export class EndpointHealth {
  readonly #topology: Topology;
  readonly #primaries = new Map<string, PrimaryRecord>();

  constructor(topology: Topology, now: Date = new Date(), downAtStart: ReadonlySet<string> = new Set()) {
    this.#topology = topology;
    for (const region of topology.regions) {
      const endpoint = endpointName(region.primary);
      this.#primaries.set(endpoint, {
        region: region.id,
        endpoint,
        health: downAtStart.has(region.id) ? "down" : "up",
        since: now,
        created: 0,
        connectFailures: 0,
      });
    }
  }

  /**
   * Reads the pools' connection counters: new connections mean up, new failures alone mean down.
   * Returns the primaries this reading found down that were not before.
   */
  update(pools: readonly PoolStats[], now: Date = new Date()): string[] {
    const wentDown: string[] = [];
    const totals = new Map<string, { created: number; connectFailures: number }>();
    for (const pool of pools) {
      const endpoint = endpointName(pool.key);
      const total = totals.get(endpoint) ?? { created: 0, connectFailures: 0 };
      total.created += pool.created;
      total.connectFailures += pool.connectFailures;
      totals.set(endpoint, total);
    }
    for (const [endpoint, total] of totals) {
      const record = this.#primaries.get(endpoint);
      if (record === undefined) continue;
      const opened = total.created > record.created;
      const failed = total.connectFailures > record.connectFailures;
      record.created = total.created;
      record.connectFailures = total.connectFailures;
      if (opened && !failed) this.#set(record, "up", now);
      else if (failed && !opened && record.health !== "down") {
        this.#set(record, "down", now);
        wentDown.push(endpoint);
      }
    }
    return wentDown;
  }

  /** The outcome of a check that used a connection to `region`'s primary. */
  observe(region: string, reachable: boolean, now: Date = new Date()): void {
    const primary = this.#topology.region(region)?.primary;
    if (primary === undefined) return;
    const record = this.#primaries.get(endpointName(primary));
    if (record !== undefined) this.#set(record, reachable ? "up" : "down", now);
  }

  /** Primaries that are down, with since when. */
  down(): { region: string; endpoint: string; since: Date }[] {
    return [...this.#primaries.values()]
      .filter((record) => record.health === "down")
      .map(({ region, endpoint, since }) => ({ region, endpoint, since }));
  }

  regions(): RegionStatus[] {
    return this.#topology.regionIds.map((id) => {
      const region = this.#topology.region(id)!;
      const primary = this.#primaries.get(endpointName(region.primary));
      return {
        id: region.id,
        home: region.home,
        endpoints: [
          {
            endpoint: endpointName(region.primary),
            role: "primary",
            health: primary?.health ?? "unknown",
            inRecovery: null,
            lagBytes: null,
            drained: false,
          },
          ...region.replicas.map((replica) => ({
            endpoint: endpointName(replica),
            role: "replica" as const,
            health: "unknown" as const,
            inRecovery: null,
            lagBytes: null,
            drained: false,
          })),
        ],
      };
    });
  }

  #set(record: PrimaryRecord, health: BackendHealth, now: Date): void {
    if (record.health === health) return;
    record.health = health;
    record.since = now;
  }
}
