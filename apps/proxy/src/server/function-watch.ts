import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import {
  type DatabaseFunctions,
  FUNCTIONS_SQL,
  type FunctionNames,
  functionNames,
} from "../routing/database-functions.js";

/** How often the catalog's functions are read again after the read at start. */
export const FUNCTION_READ_INTERVAL_MS = 60_000;

/**
 * Keeps the router's {@link DatabaseFunctions} current: the endpoint's database read from the home
 * region at start, each database clients use read when first needed, all of them every minute,
 * and before the next call after a statement through the proxy that may have changed a function.
 * A failed read leaves the database's functions judged as not harmless until the next one.
 */
export class FunctionWatch {
  #timer: NodeJS.Timeout | undefined;
  #timeoutMs = 5_000;

  constructor(
    private readonly functions: DatabaseFunctions,
    private readonly topology: Topology,
    private readonly pools: RegionPools,
    private readonly log: Logger,
  ) {
    functions.reader = (database, user) => this.#read(database, user);
  }

  /** Reads the endpoint's own database once (at start). */
  async read(timeoutMs: number): Promise<void> {
    this.#timeoutMs = timeoutMs;
    const home = this.topology.home.primary;
    const user = home.user ?? "postgres";
    const names = await this.#read(undefined, user);
    if (!(names instanceof Error)) this.functions.replace(home.database, user, names);
  }

  async #read(database: string | undefined, user: string): Promise<FunctionNames | Error> {
    const home = this.topology.home;
    const own = database === undefined || database === home.primary.database || home.primary.fixedDatabase;
    try {
      const lease = own
        ? await this.pools.acquire(home.id, user)
        : await this.pools.acquire(home.id, user, database);
      try {
        const { rows } = await lease.connection.simpleQuery(FUNCTIONS_SQL, { timeoutMs: this.#timeoutMs });
        return functionNames(rows);
      } finally {
        lease.release();
      }
    } catch (error) {
      this.log.warn(
        { region: home.id, database, err: error },
        "could not read the database's functions: calls of functions it defines are refused across regions until they are read",
      );
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Every `intervalMs` until `close()`, each database is read again before its next call. */
  start(timeoutMs: number, intervalMs = FUNCTION_READ_INTERVAL_MS): void {
    this.#timeoutMs = timeoutMs;
    this.#timer = setInterval(() => this.functions.forget(), intervalMs);
    this.#timer.unref();
  }

  /** A statement may have created, replaced or altered a function. */
  changed(): void {
    this.functions.forget();
  }

  close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    return Promise.resolve();
  }
}
