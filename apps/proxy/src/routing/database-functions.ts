/**
 * Which of the functions a statement calls could read tables the planner does not see. A function
 * the database defines (SQL, PL/pgSQL, ...) runs inside each region's server with that region's
 * rows only, so `SELECT order_count()` would count one region's orders: the router refuses such
 * a call across regions unless the function is known to read no table. Known harmless: IMMUTABLE
 * functions and those written in C or internal (extensions' functions), by name with every
 * overload so, read from the home region's catalog at start and every minute after. A name not
 * read yet (created since) counts as one that may read tables.
 */
export class DatabaseFunctions {
  #harmless: ReadonlySet<string> = new Set();
  #readAt: number | undefined;
  #stale = false;
  /** Reads the catalog again now (set by server/function-watch.ts). */
  reread: (() => Promise<void>) | undefined;

  /**
   * Before a statement that calls a database function is routed: when a statement through the
   * proxy may have changed functions since the last read, the catalog is read first (a client
   * that creates a function and then calls it sees it), else nothing is awaited.
   */
  async current(called: readonly string[]): Promise<void> {
    if (!this.#stale || called.length === 0 || this.reread === undefined) return;
    await this.reread();
  }

  /** True when the function (`name` or `schema.name`, as the analysis lists it) reads no table. */
  harmless(name: string): boolean {
    return this.#harmless.has(name);
  }

  /** The first function of the list that may read tables, or undefined. */
  firstOpaque(names: readonly string[]): string | undefined {
    for (const name of names) if (!this.#harmless.has(name)) return name;
    return undefined;
  }

  /** Replaces what is known with a fresh read of the catalog. */
  replace(harmless: ReadonlySet<string>, at = Date.now()): void {
    this.#harmless = harmless;
    this.#readAt = at;
    this.#stale = false;
  }

  /** After a statement that may change functions: none is known harmless until read again. */
  forget(): void {
    this.#harmless = new Set();
    this.#stale = true;
  }

  get readAt(): number | undefined {
    return this.#readAt;
  }
}

/**
 * The catalog query: every function's name, schema and whether every overload of it is harmless.
 * The server's own functions count as harmless (newer servers define names the analyser's list
 * lacks).
 */
export const FUNCTIONS_SQL = `SELECT p.proname, n.nspname,
    pg_catalog.bool_and(n.nspname IN ('pg_catalog', 'information_schema') OR p.provolatile = 'i'
      OR l.lanname IN ('c', 'internal'))
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_language l ON l.oid = p.prolang
  GROUP BY 1, 2`;

/** Harmless names from the query's rows: `schema.name` per schema, `name` when harmless in every schema. */
export function harmlessNames(rows: readonly (readonly (string | null | undefined)[])[]): Set<string> {
  const byName = new Map<string, boolean>();
  const harmless = new Set<string>();
  for (const [name, schema, flag] of rows) {
    if (name == null || schema == null) continue;
    const ok = flag === "t";
    if (ok) harmless.add(`${schema}.${name}`);
    byName.set(name, (byName.get(name) ?? true) && ok);
  }
  for (const [name, ok] of byName) if (ok) harmless.add(name);
  return harmless;
}
