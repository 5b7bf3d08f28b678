import type { GeoConfig, RegionConfig, RegionId, TablePolicy } from "../config/types.js";

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
  private readonly byId: ReadonlyMap<RegionId, RegionConfig>;
  private readonly locations: ReadonlyMap<string, readonly RegionId[]>;

  constructor(regions: readonly RegionConfig[], tables: readonly TablePolicy[] = []) {
    if (regions.length === 0) throw new TypeError("a topology needs at least one region");
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
  }

  static fromConfig(config: Pick<GeoConfig, "regions" | "tables">): Topology {
    return new Topology(config.regions, config.tables);
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
