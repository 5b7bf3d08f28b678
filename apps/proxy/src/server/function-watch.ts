import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import { type DatabaseFunctions, FUNCTIONS_SQL, harmlessNames } from "../routing/database-functions.js";

/** How often the catalog's functions are read again after the read at start. */
export const FUNCTION_READ_INTERVAL_MS = 60_000;

/** After a statement that may change functions, how long before they are read again. */
const AFTER_CHANGE_MS = 1_000;

/**
 * Keeps the router's {@link DatabaseFunctions} current: read from the home region at start, every
 * minute, before the next statement that calls one after a statement through the proxy that may
 * have changed a function (none is known harmless meanwhile), and again a second after that
 * change (a read that ran before the change committed is so corrected). A failed read keeps what
 * was known.
 */
export class FunctionWatch {
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly functions: DatabaseFunctions,
    private readonly topology: Topology,
    private readonly pools: RegionPools,
    private readonly log: Logger,
  ) {
    functions.reread = () => this.#readNow();
  }

  /** Reads the home region's catalog once; resolves whether it could or not. */
  async read(timeoutMs: number): Promise<void> {
    const home = this.topology.home;
    try {
      const lease = await this.pools.acquire(home.id, home.primary.user ?? "postgres");
      try {
        const { rows } = await lease.connection.simpleQuery(FUNCTIONS_SQL, { timeoutMs });
        this.functions.replace(harmlessNames(rows));
      } finally {
        lease.release();
      }
    } catch (error) {
      this.log.warn(
        { region: home.id, err: error },
        "could not read the database's functions: statements calling functions not read yet are refused across regions",
      );
    }
  }

  /** Reads again every `intervalMs` until `close()`, and soon after each `changed()`. */
  start(timeoutMs: number, intervalMs = FUNCTION_READ_INTERVAL_MS): void {
    this.#timeoutMs = timeoutMs;
    this.#timer = setInterval(() => this.#readOnce(), intervalMs);
    this.#timer.unref();
  }

  #timeoutMs = 5_000;

  /** A statement may have created, replaced or altered a function. */
  changed(): void {
    this.functions.forget();
    if (this.#soon !== undefined) clearTimeout(this.#soon);
    this.#soon = setTimeout(() => this.#readOnce(), AFTER_CHANGE_MS);
    this.#soon.unref();
  }

  #readOnce(): void {
    void this.#readNow();
  }

  /** One read at a time: a caller arriving while one runs shares it. */
  #readNow(): Promise<void> {
    if (this.#running !== undefined) return this.#running;
    this.#running = this.read(this.#timeoutMs).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#soon !== undefined) clearTimeout(this.#soon);
    this.#timer = undefined;
    this.#soon = undefined;
    await this.#running;
  }
}
