import type { SessionPort } from "../engine/session-port.js";
import type { ProxyRuntime } from "../server/runtime.js";
import type { StatementShape } from "./region-statement.js";

/** What describing a scatter's statements found: the client statement's shape, then each rewrite's. */
export interface ScatterShapes {
  readonly original: StatementShape;
  readonly rewrites: readonly StatementShape[];
  /** The region that described each rewrite: its table OIDs are that server's own. */
  readonly describedBy: readonly string[];
}

const LIMIT = 512;
const caches = new WeakMap<ProxyRuntime, Map<string, ScatterShapes>>();

function cacheOf(runtime: ProxyRuntime): Map<string, ScatterShapes> {
  let cache = caches.get(runtime);
  if (cache === undefined) {
    cache = new Map();
    caches.set(runtime, cache);
  }
  return cache;
}

/**
 * Describing costs a round trip per statement, so shapes are kept by everything that can change
 * what a name resolves to: the text, the client's parameter types, the role and the session's
 * settings (search_path among them). Every region's RowDescription is still checked against them.
 */
export function shapeKey(session: SessionPort, text: string, paramTypes: readonly number[]): string {
  const settings = [...session.settings.entries()].map(([name, value]) => `${name}=${value}`).join("\u0001");
  return `${session.user}\u0000${settings}\u0000${paramTypes.join(",")}\u0000${text}`;
}

export function cachedShapes(runtime: ProxyRuntime, key: string): ScatterShapes | undefined {
  const cache = cacheOf(runtime);
  const found = cache.get(key);
  if (found !== undefined) {
    cache.delete(key);
    cache.set(key, found);
  }
  return found;
}

export function rememberShapes(runtime: ProxyRuntime, key: string, shapes: ScatterShapes): void {
  const cache = cacheOf(runtime);
  cache.set(key, shapes);
  if (cache.size > LIMIT) cache.delete(cache.keys().next().value as string);
}

export function forgetShapes(runtime: ProxyRuntime, key: string): void {
  cacheOf(runtime).delete(key);
}
