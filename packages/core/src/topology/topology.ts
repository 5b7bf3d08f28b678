import { DEFAULTS } from "../config/defaults.js";
import type { GeoConfig, RegionConfig, RegionId, RoutingConfig, TablePolicy } from "../config/types.js";

/** Plans carry region sets as 32-bit masks (bit i = `regionIds[i]`), which is what keeps a plan sub-microsecond. */
export const MAX_REGIONS = 32;

/**
 * Regions, the locations they stand in, and the table policies, indexed for routing. Regions that
 * share a location are shards of it; shards are ordered by region id (code-unit order), which is
 * the order the placement hash indexes.
 *
 * @example
 * const topology = Topology.fromConfig(config);
 * topology.home.id;                  // "eu-west"
 * topology.shardsOf("eu-west");      // ["eu-west"]
 */
export class Topology {
  readonly regions: readonly RegionConfig[];
  /** Region ids sorted: the order in which plans list regions. */
  readonly regionIds: readonly RegionId[];
  readonly home: RegionConfig;
  readonly homeLocation: string;
  /** The home location's shards, sorted by id: where unplaced keys are created. */
  readonly homeShards: readonly RegionId[];
  readonly tables: ReadonlyMap<string, TablePolicy>;
  readonly routing: RoutingConfig;
  /** Mask with a bit for every region. */
  readonly allMask: number;
  private readonly indexes: ReadonlyMap<RegionId, number>;
  private readonly byId: ReadonlyMap<RegionId, RegionConfig>;
  private readonly locations: ReadonlyMap<string, readonly RegionId[]>;

  constructor(
    regions: readonly RegionConfig[],
    tables: readonly TablePolicy[] = [],
    routing: RoutingConfig = { keyType: DEFAULTS.routing.keyType },
  ) {
    if (regions.length === 0) throw new TypeError("a topology needs at least one region");
    if (regions.length > MAX_REGIONS) throw new TypeError(`a topology has at most ${MAX_REGIONS} regions`);
    const homes = regions.filter((region) => region.home);
    if (homes.length !== 1) throw new TypeError("a topology needs exactly one home region");
    this.regions = regions;
    this.byId = new Map(regions.map((region) => [region.id, region]));
    this.regionIds = [...this.byId.keys()].sort(compareIds);
    this.home = homes[0]!;
    this.homeLocation = this.home.location;
    const locations = new Map<string, RegionId[]>();
    for (const id of this.regionIds) {
      const location = this.byId.get(id)!.location;
      const shards = locations.get(location);
      if (shards === undefined) locations.set(location, [id]);
      else shards.push(id);
    }
    this.locations = locations;
    this.homeShards = locations.get(this.homeLocation)!;
    this.tables = new Map(tables.map((policy) => [policy.table, policy]));
    this.routing = routing;
    this.indexes = new Map(this.regionIds.map((id, index) => [id, index]));
    this.allMask = regions.length === MAX_REGIONS ? 0xffffffff : (1 << regions.length) - 1;
  }

  static fromConfig(
    config: Pick<GeoConfig, "regions" | "tables"> & Partial<Pick<GeoConfig, "routing">>,
  ): Topology {
    return new Topology(config.regions, config.tables, config.routing);
  }

  /** The bit of a region in a region mask; -1 when unknown. */
  indexOf(id: RegionId): number {
    return this.indexes.get(id) ?? -1;
  }

  maskOf(id: RegionId): number {
    const index = this.indexes.get(id);
    return index === undefined ? 0 : (1 << index) >>> 0;
  }

  /** Region ids of a mask, in id order. */
  regionsOf(mask: number): RegionId[] {
    const ids: RegionId[] = [];
    for (let index = 0; index < this.regionIds.length; index++) {
      if ((mask >>> index) & 1) ids.push(this.regionIds[index]!);
    }
    return ids;
  }

  region(id: RegionId): RegionConfig | undefined {
    return this.byId.get(id);
  }

  hasRegion(id: RegionId): boolean {
    return this.byId.has(id);
  }

  /** Every location, each with its shards sorted by id. */
  get locationShards(): ReadonlyMap<string, readonly RegionId[]> {
    return this.locations;
  }

  shardsOf(location: string): readonly RegionId[] {
    return this.locations.get(location) ?? [];
  }
}

/** Code-unit order, independent of the machine's locale, so every proxy sorts alike. */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
