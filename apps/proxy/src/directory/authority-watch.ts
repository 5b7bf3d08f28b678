import type { DirectoryStoreConfig, RegionId } from "@geo/core";
import type { Logger } from "../log.js";
import type { RegionRunner } from "./region-runner.js";
import type { SharedTables } from "./shared-tables.js";

export interface AuthorityWatchOptions {
  readonly store: DirectoryStoreConfig;
  readonly node: string;
  readonly authority: RegionId;
  readonly regions: readonly RegionId[];
  readonly runner: RegionRunner;
  readonly log: Logger;
}

/**
 * Looks in every other region for live proxies of the same directory store agreeing there.
 * Proxies left at `authority = "home"` with different homes would each agree with themselves: a
 * live heartbeat in another region's peers table means one of them does. Found at start, the
 * proxy is refused; found later (two proxies that started at the same moment did not see each
 * other), `elsewhere` lists them and the shared directory stops routing geo-partitioned tables.
 */
export class AuthorityWatch {
  readonly #options: AuthorityWatchOptions;
  readonly #tables: SharedTables;
  #elsewhere: readonly string[] = [];
  /** What the last look found in each region; a region that did not answer keeps its last finding. */
  readonly #byRegion = new Map<RegionId, readonly string[]>();
  #looking: Promise<void> | undefined;

  constructor(options: AuthorityWatchOptions, tables: SharedTables) {
    this.#options = options;
    this.#tables = tables;
  }

  /** The proxies the last look found agreeing elsewhere, one line each; empty while they agree. */
  get elsewhere(): readonly string[] {
    return this.#elsewhere;
  }

  /** One line per live proxy agreeing in another region; a region down now counts as what it last said. */
  async look(): Promise<string[]> {
    const { runner, regions, store, node, authority } = this.#options;
    const others = regions.filter((region) => region !== authority);
    const found = await Promise.all(
      others.map(async (region) => {
        try {
          const present = await runner.runWithin(region, this.#tables.presentSql(), store.leaseMs);
          if (present.rows[0]?.["present"] !== "t") return [];
          const live = this.#tables.livePeersSql(node, 1.5 * store.leaseMs);
          const rows = (await runner.runWithin(region, live, store.leaseMs)).rows;
          const lines = rows.map(
            (row) => `${row["node"]} (homed in ${row["home"]}) agrees in region ${region}`,
          );
          this.#byRegion.set(region, lines);
          return lines;
        } catch {
          // Unreachable from here is not proof that nobody agrees there.
          return this.#byRegion.get(region) ?? [];
        }
      }),
    );
    return found.flat();
  }

  /** Looks again in the background (never two looks at once), updating `elsewhere`. */
  lookSoon(): void {
    this.#looking ??= this.look()
      .then((found) => {
        if (found.length > 0 && this.#elsewhere.length === 0)
          this.#options.log.error(
            { authority: this.#options.authority, elsewhere: found },
            "live proxies of this directory store agree in another region: statements on geo-partitioned tables are refused until every proxy names the same authority",
          );
        this.#elsewhere = found;
      })
      .catch(() => undefined)
      .finally(() => {
        this.#looking = undefined;
      });
  }

  async idle(): Promise<void> {
    await this.#looking;
  }
}
