/**
 * Which of the functions a statement calls could read tables the planner does not see. A function
 * the database defines (SQL, PL/pgSQL, ...) runs inside each region's server with that region's
 * rows only, so `SELECT order_count()` would count one region's orders: such a call is refused
 * across regions unless the function is known to read no table. Known harmless: IMMUTABLE
 * functions and those written in C or internal (extensions' functions, types' constructors), by
 * name with every overload so, read from the home region's catalog of each database clients use
 * (server/function-watch.ts). A name the last read did not list makes the database be read again,
 * once per name and read.
 */
export class DatabaseFunctions {
  readonly #databases = new Map<string, DatabaseEntry>();
  /** Reads one database's functions as a role (set by server/function-watch.ts). */
  reader: ((database: string, user: string) => Promise<FunctionNames | Error>) | undefined;

  /**
   * The first function of `called` that may read tables in `database`, or undefined. The catalog
   * is read first when it was not yet, when a statement may have changed functions since, or when
   * a name is one it did not list (created since); one read at a time per database.
   */
  async firstOpaque(database: string, user: string, called: readonly string[]): Promise<string | undefined> {
    let entry = this.#databases.get(database);
    const unseen = (name: string): boolean => !entry!.names.known.has(name) && !entry!.missed.has(name);
    if (entry === undefined || entry.stale || called.some(unseen)) {
      entry = await this.#read(database, user, entry);
      // Names still unknown are not read for again until the next read: a misspelt name fails
      // on the server, and one created later is seen by the next read.
      for (const name of called) if (!entry.names.known.has(name)) entry.missed.add(name);
    }
    for (const name of called) if (!entry.names.harmless.has(name)) return name;
    return undefined;
  }

  /** Replaces what is known of a database with a fresh read of its catalog. */
  replace(database: string, user: string, names: FunctionNames): void {
    this.#databases.set(database, { names, user, stale: false, reading: undefined, missed: new Set() });
  }

  /** After a statement that may change functions: every database is read again before it is trusted. */
  forget(): void {
    for (const entry of this.#databases.values()) entry.stale = true;
  }

  /** The databases read so far, with the role each was read as. */
  databases(): [database: string, user: string][] {
    return [...this.#databases].map(([database, entry]) => [database, entry.user]);
  }

  async #read(database: string, user: string, known: DatabaseEntry | undefined): Promise<DatabaseEntry> {
    if (known?.reading !== undefined) {
      await known.reading;
      return this.#databases.get(database) ?? known;
    }
    const pending: DatabaseEntry = known ?? {
      names: NONE,
      user,
      stale: true,
      reading: undefined,
      missed: new Set(),
    };
    const reading = (this.reader?.(database, user) ?? Promise.resolve(new Error("no reader"))).then(
      (names) => {
        if (names instanceof Error) {
          pending.reading = undefined;
          this.#databases.set(database, pending);
        } else this.replace(database, user, names);
      },
    );
    pending.reading = reading;
    this.#databases.set(database, pending);
    await reading;
    return this.#databases.get(database) ?? pending;
  }
}

/** What one read of a database's catalog found. */
export interface FunctionNames {
  /** Names (`name`, `schema.name`) of functions that read no table. */
  readonly harmless: ReadonlySet<string>;
  /** Every name the catalog listed, harmless or not. */
  readonly known: ReadonlySet<string>;
}

interface DatabaseEntry {
  names: FunctionNames;
  user: string;
  stale: boolean;
  reading: Promise<void> | undefined;
  /** Names called since the last read that it did not list. */
  missed: Set<string>;
}

const NONE: FunctionNames = { harmless: new Set(), known: new Set() };

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

/** The names of the query's rows: `schema.name` per schema, `name` harmless when so in every schema. */
export function functionNames(rows: readonly (readonly (string | null | undefined)[])[]): FunctionNames {
  const byName = new Map<string, boolean>();
  const harmless = new Set<string>();
  const known = new Set<string>();
  for (const [name, schema, flag] of rows) {
    if (name == null || schema == null) continue;
    const ok = flag === "t";
    known.add(name).add(`${schema}.${name}`);
    if (ok) harmless.add(`${schema}.${name}`);
    byName.set(name, (byName.get(name) ?? true) && ok);
  }
  for (const [name, ok] of byName) if (ok) harmless.add(name);
  return { harmless, known };
}
