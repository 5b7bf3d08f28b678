import type { Topology } from "@geo/core";
import type { BackendConnection, ConnectFunction, ConnectOptions } from "@geo/pool";
import type { PgError } from "@geo/proto";
import type { Logger } from "../log.js";
import type { Fact } from "../observability/alert-book.js";
import { databaseCollationDiffers } from "../scatter/errors.js";
import {
  collationQuery,
  createDatabaseOptions,
  type DatabaseCollation,
  describeCollation,
  parseCollation,
  sameCollation,
} from "./database-collation.js";

/** A region whose database's default collation is not the home region's database's. */
export interface CollationMismatch {
  readonly region: string;
  readonly database: string;
  readonly collation: DatabaseCollation;
  readonly home: string;
  readonly homeDatabase: string;
  readonly homeCollation: DatabaseCollation;
  /** When the proxy first read the two as different. */
  readonly since: Date;
}

interface DatabaseState {
  readonly region: string;
  readonly database: string;
  /** The endpoint names its database: every client's connections there use this one. */
  readonly fixed: boolean;
  /** As last read; null before the first read that succeeded. */
  collation: DatabaseCollation | null;
  /** To be read again: on the next connection opened to it, or first by a read spanning regions. */
  stale: boolean;
  /** Connections the pools hold open to it now. */
  open: number;
  /** Why the last read failed, logged once per cause. */
  unreadable: string | null;
}

/** The key of one database of one region: names cannot hold NUL. */
function keyOf(region: string, database: string): string {
  return `${region}\u0000${database}`;
}

/**
 * Each region's database default collation, compared with the home region's. It is read on a
 * connection as it opens, before the pool hands it to any statement, whenever the database may
 * have changed since the last read: at the first connection to it, after a connection to its
 * server broke or could not be opened, and after every connection to it had closed. A database's
 * default collation cannot change while it exists, and a new collation library needs a server
 * restart; each of those ends every connection to it, so a region coming back (the proxy started
 * without it, its server restarted, its database was created anew) is read again before it serves
 * a statement. A read spanning regions reads any of its databases still to be read first, on a
 * pooled connection (`needsRead`, `readOn`), so the answer never rests on a reading older than
 * the region's return.
 *
 * Kept per database: where endpoints name none, each client's connections use the database the
 * client named, and that one is compared with home's database of the same name.
 *
 * @example
 * ```ts
 * const collations = new RegionCollations(topology, log);
 * const pools = new RegionPools(topology, config, collations.watch(connect));
 * collations.refusal(["eu-west", "us-east"], (region) => "shop"); // null, or the 0A000
 * ```
 */
export class RegionCollations {
  readonly #topology: Topology;
  readonly #log: Logger;
  readonly #states = new Map<string, DatabaseState>();
  /**
   * Regions by their primary's `host:port` (the pools connect only to primaries). Several regions
   * may share a server; a connection to one of its databases is a reading for each of them.
   */
  readonly #byEndpoint = new Map<string, string[]>();
  readonly #since = new Map<string, Date>();

  constructor(topology: Topology, log: Logger) {
    this.#topology = topology;
    this.#log = log;
    for (const region of topology.regions) {
      const endpoint = `${region.primary.host}:${region.primary.port}`;
      this.#byEndpoint.set(endpoint, [...(this.#byEndpoint.get(endpoint) ?? []), region.id]);
    }
  }

  /** `connect` reading the collation on the connections that need it (see the class). */
  watch(connect: ConnectFunction): ConnectFunction {
    // With one region nothing is read across regions: no connection pays for the read.
    if (this.#topology.regions.length === 1) return connect;
    return async (options: ConnectOptions): Promise<BackendConnection> => {
      const regions = this.#byEndpoint.get(`${options.host}:${options.port}`);
      if (regions === undefined) return connect(options);
      const states = regions.map((region) => this.#state(region, options.database));
      let connection: BackendConnection;
      try {
        connection = await connect(options);
      } catch (error) {
        this.#serverMayHaveChanged(regions);
        throw error;
      }
      for (const state of states) state.open++;
      connection.onBroken(() => this.#serverMayHaveChanged(regions));
      void connection.closed.then(() => {
        for (const state of states) {
          state.open--;
          if (state.open === 0) state.stale = true;
        }
      });
      await this.#read(states, connection, options.connectTimeoutMs);
      return connection;
    };
  }

  /**
   * Whether the database must be read before a read spanning regions may rely on what is known:
   * never read, or its server may have changed since (see the class).
   */
  needsRead(region: string, database: string): boolean {
    return this.#states.get(keyOf(region, database))?.stale ?? true;
  }

  /** Reads the collation of a connection's database, when it still needs reading (`needsRead`). */
  async readOn(connection: BackendConnection, timeoutMs: number): Promise<void> {
    const regions = this.#byEndpoint.get(`${connection.host}:${connection.port}`) ?? [];
    await this.#read(
      regions.map((region) => this.#state(region, connection.database)),
      connection,
      timeoutMs,
    );
  }

  /** Databases whose default collation is not that of home's database they are compared with. */
  mismatches(): CollationMismatch[] {
    const home = this.#topology.home.id;
    const homes = [...this.#states.values()].filter((s) => s.region === home && s.collation !== null);
    const out: CollationMismatch[] = [];
    for (const state of this.#states.values()) {
      if (state.region === home || state.collation === null) continue;
      // The home database a client reads this one with: its own name unless an endpoint fixes one.
      const paired = homes.find((h) => h.fixed || state.fixed || h.database === state.database);
      if (paired === undefined || sameCollation(state.collation, paired.collation!)) continue;
      out.push({
        region: state.region,
        database: state.database,
        collation: state.collation,
        home,
        homeDatabase: paired.database,
        homeCollation: paired.collation!,
        since: this.#since.get(keyOf(state.region, state.database)) ?? new Date(),
      });
    }
    return out.sort((a, b) => compare(`${a.region}/${a.database}`, `${b.region}/${b.database}`));
  }

  /** The `collation_differs` alerts, one per region's database that differs (subject `region/database`). */
  facts(): Fact[] {
    return this.mismatches().map((m) => ({
      name: "collation_differs",
      subject: `${m.region}/${m.database}`,
      message: `database "${m.database}" of ${m.region} has default collation (${describeCollation(m.collation)}), database "${m.homeDatabase}" of the home region ${m.home} has (${describeCollation(m.homeCollation)}): reads and writes spanning ${m.region} are refused`,
      since: m.since,
    }));
  }

  /**
   * The refusal of a read spanning `regions` when one of them orders text otherwise than home
   * (whose finish, and whose rules a client reads the answer by, are home's): every region's part
   * compares, sorts and cuts text under its own database default. `databaseOf` gives the database
   * the statement's connections use in a region. Null when none differs.
   */
  refusal(regions: readonly string[], databaseOf: (region: string) => string): PgError | null {
    const home = this.#topology.home.id;
    const homeDatabase = databaseOf(home);
    const homeCollation = this.#states.get(keyOf(home, homeDatabase))?.collation ?? null;
    if (homeCollation === null) return null;
    for (const region of new Set(regions)) {
      if (region === home) continue;
      const database = databaseOf(region);
      const collation = this.#states.get(keyOf(region, database))?.collation ?? null;
      if (collation === null || sameCollation(collation, homeCollation)) continue;
      return databaseCollationDiffers(
        region,
        describeCollation(collation),
        home,
        describeCollation(homeCollation),
        database,
        createDatabaseOptions(homeCollation),
      );
    }
    return null;
  }

  #state(region: string, database: string): DatabaseState {
    const key = keyOf(region, database);
    let state = this.#states.get(key);
    if (state === undefined) {
      state = {
        region,
        database,
        fixed: this.#topology.region(region)?.primary.fixedDatabase ?? false,
        collation: null,
        stale: true,
        open: 0,
        unreadable: null,
      };
      this.#states.set(key, state);
    }
    return state;
  }

  /** The server went away or would not answer: every database of it is read again. */
  #serverMayHaveChanged(regions: readonly string[]): void {
    for (const state of this.#states.values()) if (regions.includes(state.region)) state.stale = true;
  }

  /** Reads the connection's database for the states of it that are stale (none: no statement). */
  async #read(
    states: readonly DatabaseState[],
    connection: BackendConnection,
    timeoutMs: number,
  ): Promise<void> {
    const stale = states.filter((state) => state.stale);
    if (stale.length === 0) return;
    const sql = collationQuery(connection.database, connection.parameters.get("server_version"));
    let collation: DatabaseCollation | null;
    try {
      collation = parseCollation((await connection.simpleQuery(sql, { timeoutMs })).rows);
    } catch (error) {
      // A connection that broke reading is no connection to hand out; the pool counts the failure.
      if (!connection.usable) {
        connection.destroy();
        throw error;
      }
      const why = error instanceof Error ? error.message : String(error);
      for (const state of stale) this.#unreadable(state, why);
      return;
    }
    if (collation === null) {
      const why = `pg_database has no usable row for database "${connection.database}"`;
      for (const state of stale) this.#unreadable(state, why);
      return;
    }
    const before = new Set(this.mismatches().map((m) => keyOf(m.region, m.database)));
    for (const state of stale) {
      state.collation = collation;
      state.stale = false;
      state.unreadable = null;
    }
    const after = this.mismatches();
    const now = new Date();
    for (const m of after) {
      const key = keyOf(m.region, m.database);
      if (before.delete(key)) continue;
      this.#since.set(key, now);
      this.#log.warn(
        {
          region: m.region,
          database: m.database,
          collation: describeCollation(m.collation),
          homeRegion: m.home,
          homeDatabase: m.homeDatabase,
          homeCollation: describeCollation(m.homeCollation),
        },
        `region ${m.region}'s database "${m.database}" has default collation (${describeCollation(m.collation)}), the home region ${m.home}'s "${m.homeDatabase}" has (${describeCollation(m.homeCollation)}): reads and writes spanning ${m.region} are refused until they match`,
      );
    }
    for (const key of before) {
      const [region, database] = key.split("\u0000");
      this.#since.delete(key);
      this.#log.info(
        { region, database, homeRegion: this.#topology.home.id },
        `region ${region}'s database "${database}" has the home region's default collation again: reads spanning it are answered`,
      );
    }
  }

  /** Not read again until its server may have changed: every read of it would fail alike. */
  #unreadable(state: DatabaseState, why: string): void {
    state.stale = false;
    if (state.unreadable === why) return;
    state.unreadable = why;
    this.#log.warn(
      { region: state.region, database: state.database, err: why },
      `cannot read the default collation of region ${state.region}'s database "${state.database}": its reads spanning regions are not checked against the home region's; read again after its server went away and came back`,
    );
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
