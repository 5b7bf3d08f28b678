import type { MutableDirectory, RegionId } from "@geo/core";
import type { SqlRows } from "./region-runner.js";
import type { SharedTables } from "./shared-tables.js";
import type { Entry } from "./visit-merge.js";

/**
 * What this proxy knows of the directory where the proxies agree: each key's newest entry a visit
 * or a refresh read (its region and version), and the keys this proxy pointed at a region itself
 * since. The answers are applied to the in-memory directory through it, so an older answer never
 * undoes a newer one: a key this proxy changed after an answer was sent is left as it is.
 */
export class KnownEntries {
  /** Each key's newest entry read; the visits merge into it. */
  readonly entries = new Map<string, Entry>();
  /**
   * performance.now() when this proxy itself pointed a key at a region (a move it committed, a
   * claim it read back). An answer sent before that read an older snapshot: it leaves the key be.
   */
  readonly #assignedAt = new Map<string, number>();

  constructor(private readonly directory: MutableDirectory) {}

  versionOf(key: string): number | undefined {
    return this.entries.get(key)?.version;
  }

  /** Keys this proxy just pointed at a region; `moved`: the region and versions its committed move gave them. */
  assigned(keys: readonly string[], moved?: { to: RegionId; versions: ReadonlyMap<string, number> }): void {
    const now = performance.now();
    for (const key of keys) {
      this.#assignedAt.set(key, now);
      const version = moved?.versions.get(key);
      if (moved !== undefined && version !== undefined && version > (this.versionOf(key) ?? -1))
        this.entries.set(key, { region: moved.to, version });
    }
  }

  /**
   * Points the directory at these entries, read by an answer sent at `sentAt`. Returns the keys
   * left as they were because this proxy changed them after it was sent (to be read again).
   */
  apply(entries: Iterable<[string, Entry]>, sentAt: number): Set<string> {
    const skipped = new Set<string>();
    for (const [key, entry] of entries) {
      if ((this.#assignedAt.get(key) ?? -Infinity) > sentAt) {
        skipped.add(key);
        continue;
      }
      if (this.directory.lookup(key) !== entry.region) this.directory.assign(key, entry.region);
    }
    for (const [key, at] of this.#assignedAt) if (at <= sentAt) this.#assignedAt.delete(key);
    return skipped;
  }

  /**
   * Reads `keys`' entries where the proxies agree (`run`: a quorum step) and points the directory
   * at the newest of each; false when too few regions answered.
   */
  async refresh(
    keys: readonly string[],
    run: (sql: string) => Promise<Map<string, SqlRows>>,
    tables: SharedTables,
  ): Promise<boolean> {
    const sentAt = performance.now();
    try {
      this.learn(keys, (await run(tables.versionsSql(keys))).values(), sentAt);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Answers of SharedTables.versionsSql (key, region, version) from several regions, sent at
   * `sentAt`: each key's newest is kept and the directory pointed at it.
   */
  learn(keys: readonly string[], answers: Iterable<SqlRows>, sentAt: number): void {
    for (const answer of answers)
      for (const row of answer.rows) {
        const key = row["key"];
        const region = row["region"];
        if (key == null || region == null) continue;
        const version = Number(row["version"] ?? 0);
        if (version > (this.versionOf(key) ?? -1)) this.entries.set(key, { region, version });
      }
    const newest: [string, Entry][] = [];
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry !== undefined) newest.push([key, entry]);
    }
    // Keys changed here since the read was sent keep that change; nothing else is forgotten.
    for (const [key, entry] of newest)
      if ((this.#assignedAt.get(key) ?? -Infinity) <= sentAt && this.directory.lookup(key) !== entry.region)
        this.directory.assign(key, entry.region);
  }
}
