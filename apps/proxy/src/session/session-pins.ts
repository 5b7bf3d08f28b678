import type { Analysis } from "@geo/sql";

/** Functions that release session advisory locks rather than take them. */
const ADVISORY_UNLOCKS: ReadonlySet<string> = new Set([
  "pg_advisory_unlock",
  "pg_advisory_unlock_shared",
  "pg_advisory_unlock_all",
]);

/**
 * Session objects that live on one backend connection and cannot follow the client to another:
 * LISTEN channels, WITH HOLD cursors, temporary tables, session advisory locks, SQL-level
 * prepared statements and loaded libraries. While any lives, the client keeps that connection
 * (it is "pinned"); the connection is reset with DISCARD ALL when the client leaves.
 *
 * What ends them: UNLISTEN (a channel, or `*`), CLOSE of the cursor (or CLOSE ALL),
 * pg_advisory_unlock_all(), DEALLOCATE, DISCARD. When nothing is left the client is unpinned.
 * A single pg_advisory_unlock(key) does not unpin: session locks nest (a key locked twice needs
 * two unlocks), pg_try_advisory_lock may not have taken its lock, and keys may be parameters, so
 * the proxy cannot tell when the last lock went; pg_advisory_unlock_all() always ends them all.
 */
export class SessionPins {
  private readonly listens = new Set<string>();
  private readonly objects = new Set<string>();

  get pinned(): boolean {
    return this.listens.size > 0 || this.objects.size > 0;
  }

  /**
   * A temporary table lives (or may live, after a statement the proxy could not read): its name
   * comes before every schema in the search_path, so only the catalog can say what a name reads.
   */
  get mayHoldTempTables(): boolean {
    for (const name of this.objects) if (name.startsWith("temp:") || name === "unknown") return true;
    return false;
  }

  /** True when the statement creates something that must stay on its connection. */
  static pins(analysis: Analysis): boolean {
    return analysis.sessionEffects.some(
      (effect) =>
        !effect.local &&
        (effect.kind === "listen" ||
          effect.kind === "declare-with-hold" ||
          effect.kind === "create-temp" ||
          (effect.kind === "advisory-lock" && !ADVISORY_UNLOCKS.has(effect.name ?? "")) ||
          effect.kind === "prepare" ||
          effect.kind === "load"),
    );
  }

  /**
   * Records the effects of a statement that succeeded on the pinned connection. Inside a
   * transaction block nothing is removed: UNLISTEN takes effect only at commit, and a block that
   * rolls back would leave the object alive on a connection the client no longer holds. Staying
   * pinned a little longer is always safe.
   */
  record(analysis: Analysis, inBlock = false): void {
    for (const effect of analysis.sessionEffects) {
      const name = effect.name ?? "";
      if (inBlock && SessionPins.removes(effect)) continue;
      switch (effect.kind) {
        case "listen":
          this.listens.add(name);
          break;
        case "unlisten":
          if (effect.name === undefined) this.listens.clear();
          else this.listens.delete(name);
          break;
        case "declare-with-hold":
          this.objects.add(`cursor:${name}`);
          break;
        case "create-temp":
          if (!effect.local) this.objects.add(`temp:${name}`);
          break;
        case "advisory-lock":
          if (effect.name === "pg_advisory_unlock_all") this.objects.delete("advisory");
          else if (!effect.local && !ADVISORY_UNLOCKS.has(name)) this.objects.add("advisory");
          break;
        case "close-cursor":
          if (effect.name === undefined) this.dropPrefix("cursor:");
          else this.objects.delete(`cursor:${name}`);
          break;
        case "prepare":
          this.objects.add(`prepared:${name}`);
          break;
        case "load":
          this.objects.add(`load:${name}`);
          break;
        case "deallocate":
          if (effect.name === undefined) this.dropPrefix("prepared:");
          else this.objects.delete(`prepared:${name}`);
          break;
        case "discard":
          if (effect.value === "all") {
            this.listens.clear();
            this.objects.clear();
          } else if (effect.value === "temp") this.dropPrefix("temp:");
          break;
        case "set":
        case "reset":
        case "set-config":
        case "execute":
          break;
      }
    }
  }

  private static removes(effect: Analysis["sessionEffects"][number]): boolean {
    switch (effect.kind) {
      case "unlisten":
      case "close-cursor":
      case "deallocate":
      case "discard":
        return true;
      case "advisory-lock":
        return effect.name === "pg_advisory_unlock_all";
      default:
        return false;
    }
  }

  /**
   * A statement the proxy could not read ran, and succeeded, on the connection: whatever it
   * left there (settings, objects) stays the client's only there, until DISCARD ALL.
   */
  /** A temporary object the statements' own effects do not name (created under a search_path naming pg_temp). */
  holdTemporary(name: string): void {
    this.objects.add(`temp:${name}`);
  }

  holdUnknown(): void {
    this.objects.add("unknown");
  }

  private dropPrefix(prefix: string): void {
    for (const name of [...this.objects]) if (name.startsWith(prefix)) this.objects.delete(name);
  }
}
