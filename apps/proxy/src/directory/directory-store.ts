import {
  canonicalKey,
  type DirectoryStoreConfig,
  type MutableDirectory,
  type RegionId,
  type Topology,
} from "@geo/core";
import { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import { DirectoryTable } from "./directory-table.js";
import { dropGuardSql, guardFunctionSql, guardTriggerSql } from "./guard-sql.js";
import type { RegionRunner } from "./region-runner.js";
import { literal, qualified } from "./sql-text.js";

/** A geo-partitioned table and its key column. */
export interface GeoTable {
  readonly table: string;
  readonly key: string;
}

/** Where a key's rows were found by looking in every region. */
export type Location =
  | { readonly kind: "nowhere" }
  | { readonly kind: "one"; readonly region: RegionId }
  | { readonly kind: "several"; readonly regions: readonly RegionId[] };

/**
 * The directory kept in PostgreSQL (`[directory_store]`): a table in every region, created at
 * start, read whole into the in-memory directory the router plans with, and written by moves
 * (every region) and by first writes (the region that receives them). The in-memory directory is
 * the one `Directory` every statement consults; this class keeps it and the tables in step.
 */
export class DirectoryStore {
  readonly table: DirectoryTable;
  readonly geoTables: readonly GeoTable[];
  /** Keys regions disagree on: kept out of the directory, also when a late region lists them. */
  readonly #conflicting = new Set<string>();
  /** Regions whose table has not been read yet (down at start): their entries are missing. */
  readonly #unloaded = new Set<RegionId>();

  constructor(
    /** The directory the router plans with; the store loads into it and keeps it current. */
    readonly directory: MutableDirectory,
    readonly config: DirectoryStoreConfig,
    readonly topology: Topology,
    private readonly runner: RegionRunner,
    private readonly log: Logger,
  ) {
    this.table = new DirectoryTable(config.table);
    this.geoTables = geoTablesOf(topology);
    this.#versioned = config.shared && config.authority === "majority";
  }

  /**
   * Shared in a majority of the regions: a late region's entry that disagrees is one the region
   * missed a move of (the visits, which compare versions, catch it up), not a conflict.
   */
  readonly #versioned: boolean;

  /**
   * Creates the table in every region (idempotently; two proxies starting at once may race on
   * CREATE, and the loser's duplicate error is the winner's table), installs or removes the
   * guards, then loads every region's entries. An entry two regions disagree on is left out and
   * reported: the key is then looked for in every region, and refused if found in two.
   *
   * `regions` are the regions reachable at start (default: every region); each of the others is
   * opened with `openRegion` once it answers. Until then a key listed only in its table has no
   * entry, and looking for it in every region fails naming the region, so it is never placed
   * anew elsewhere.
   */
  async open(regions: readonly RegionId[] = this.topology.regionIds): Promise<void> {
    for (const region of this.topology.regionIds) if (!regions.includes(region)) this.#unloaded.add(region);
    await Promise.all(regions.map((region) => this.prepareRegion(region)));
    const loaded = await Promise.all(
      regions.map(async (region) => ({
        region,
        rows: (await this.runner.run(region, this.table.loadSql())).rows,
      })),
    );
    const seen = new Map<string, RegionId>();
    const conflicting = new Set<string>();
    for (const { rows } of loaded) {
      for (const row of rows) {
        const key = row["key"];
        const placed = row["region"];
        if (key == null || placed == null) continue;
        if (!this.topology.hasRegion(placed)) {
          this.log.warn({ key, region: placed }, "directory entry names an unknown region; ignored");
          continue;
        }
        const earlier = seen.get(key);
        if (earlier !== undefined && earlier !== placed) conflicting.add(key);
        seen.set(key, placed);
      }
    }
    for (const [key, placed] of seen) if (!conflicting.has(key)) this.directory.assign(key, placed);
    for (const key of conflicting) this.#conflicting.add(key);
    if (conflicting.size > 0)
      this.log.warn(
        { keys: [...conflicting].slice(0, 10), count: conflicting.size },
        "regions disagree on where these keys live; they are looked for in every region",
      );
    this.log.info({ keys: this.directory.size, table: this.config.table }, "directory loaded");
  }

  /**
   * A region that was unreachable when the store opened, now answering: its table and guards are
   * prepared as `open` would have, and its entries join the directory. An entry that disagrees
   * with what the directory holds takes the key out, as at start (shared in a majority: the
   * directory's entry stays; the region is behind).
   */
  async openRegion(region: RegionId): Promise<void> {
    await this.prepareRegion(region);
    const rows = (await this.runner.run(region, this.table.loadSql())).rows;
    const conflicting: string[] = [];
    let added = 0;
    for (const row of rows) {
      const key = row["key"];
      const placed = row["region"];
      if (key == null || placed == null || this.#conflicting.has(key)) continue;
      if (!this.topology.hasRegion(placed)) {
        this.log.warn({ key, region: placed }, "directory entry names an unknown region; ignored");
        continue;
      }
      const current = this.directory.lookup(key);
      if (current === undefined) {
        this.directory.assign(key, placed);
        added++;
      } else if (current !== placed && !this.#versioned) {
        this.directory.remove(key);
        this.#conflicting.add(key);
        conflicting.push(key);
      }
    }
    this.#unloaded.delete(region);
    if (conflicting.length > 0)
      this.log.warn(
        { region, keys: conflicting.slice(0, 10), count: conflicting.length },
        "regions disagree on where these keys live; they are looked for in every region",
      );
    this.log.info({ region, added, keys: this.directory.size }, "directory entries of a late region loaded");
  }

  private async prepareRegion(region: RegionId): Promise<void> {
    await createRacing(() => this.runner.run(region, this.table.createSql()));
    if (this.config.guard) {
      const statements: string[] = [];
      for (const geo of this.geoTables) {
        statements.push(
          guardFunctionSql(this.config.table, geo.table, geo.key, region),
          guardTriggerSql(geo.table),
        );
      }
      await this.runner.run(region, statements.join(";\n"));
      return;
    }
    for (const geo of this.geoTables) {
      await this.runner.run(region, dropGuardSql(geo.table)).catch((error: unknown) => {
        this.log.warn({ region, table: geo.table, err: error }, "could not remove a guard trigger");
      });
    }
  }

  /**
   * False while a region's table is unread: a key with no entry may then have one there, so even a
   * first write must look for its key in every region before it places it.
   */
  get complete(): boolean {
    return this.#unloaded.size === 0;
  }

  /** The statement recording a first write's key, run ahead of the write in the region it goes to. */
  recordSql(keys: readonly string[], region: RegionId): string {
    return this.table.recordSql(keys, region);
  }

  /** The key in the directory's spelling (integer keys canonical). */
  canonical(key: string): string {
    return canonicalKey(key, this.topology.routing.keyType);
  }

  /**
   * Looks for rows of `key` in every geo-partitioned table of every region, in parallel: what a
   * read of a key with no entry needs before it can go to one region.
   */
  async locate(key: string): Promise<Location> {
    if (this.geoTables.length === 0) return { kind: "nowhere" };
    const probe = `SELECT ${this.geoTables
      .map(
        (geo) =>
          `EXISTS (SELECT 1 FROM ${qualified(geo.table)} WHERE ${qualified(geo.key)} = ${literal(key)})`,
      )
      .join(" OR ")} AS found`;
    const regions = this.topology.regionIds;
    const found = await Promise.all(
      regions.map(async (region) => (await this.runner.run(region, probe)).rows[0]?.["found"] === "t"),
    );
    const holders = regions.filter((_region, i) => found[i]);
    if (holders.length === 0) return { kind: "nowhere" };
    if (holders.length === 1) return { kind: "one", region: holders[0]! };
    return { kind: "several", regions: holders };
  }

  /** Records a located key in the region that holds it, so the next start knows it too. */
  async remember(key: string, region: RegionId): Promise<void> {
    if (this.directory.lookup(key) !== undefined) return;
    this.directory.assign(key, region);
    if (!this.config.recordNewKeys) return;
    await this.runner.run(region, this.table.recordSql([key], region)).catch((error: unknown) => {
      this.log.warn({ key, region, err: error }, "could not record a located key");
    });
  }
}

/** Every geo-partitioned table of the topology, with its key column. */
export function geoTablesOf(topology: Topology): GeoTable[] {
  const tables: GeoTable[] = [];
  for (const policy of topology.tables.values()) {
    if (policy.placement === "geo_partitioned") tables.push({ table: policy.table, key: policy.key });
  }
  return tables;
}

/**
 * Runs idempotent CREATE ... IF NOT EXISTS statements that another process may run at the same
 * moment: the loser fails on the catalog (23505, 42P07, or 42710 for the table's row type), and
 * runs them again once, when the winner's objects are there and every statement of the string runs.
 */
export async function createRacing(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!(error instanceof PgError && ["23505", "42P07", "42710"].includes(error.code))) throw error;
    await new Promise((resolve) => setTimeout(resolve, 50));
    await create();
  }
}
