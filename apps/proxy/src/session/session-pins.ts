import type { Analysis } from "@geo/sql";

/**
 * Session objects that live on one backend connection and cannot follow the client to another:
 * LISTEN channels, WITH HOLD cursors, temporary tables, session advisory locks, SQL-level
 * prepared statements and loaded libraries. While any lives, the client keeps that connection
 * (it is "pinned"); the connection is reset with DISCARD ALL when the client leaves.
 */
export class SessionPins {
  private readonly listens = new Set<string>();
  private readonly objects = new Set<string>();

  get pinned(): boolean {
    return this.listens.size > 0 || this.objects.size > 0;
  }

  /** True when the statement creates something that must stay on its connection. */
  static pins(analysis: Analysis): boolean {
    return analysis.sessionEffects.some(
      (effect) =>
        !effect.local &&
        (effect.kind === "listen" ||
          effect.kind === "declare-with-hold" ||
          effect.kind === "create-temp" ||
          effect.kind === "advisory-lock" ||
          effect.kind === "prepare" ||
          effect.kind === "load"),
    );
  }

  /** Records the effects of a statement that succeeded on the pinned connection. */
  record(analysis: Analysis): void {
    for (const effect of analysis.sessionEffects) {
      const name = effect.name ?? "";
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
          // Unlocks are not tracked: a session that took a lock stays pinned until DISCARD ALL.
          if (!effect.local) this.objects.add("advisory");
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

  private dropPrefix(prefix: string): void {
    for (const name of [...this.objects]) if (name.startsWith(prefix)) this.objects.delete(name);
  }
}
