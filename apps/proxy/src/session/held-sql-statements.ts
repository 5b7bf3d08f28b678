import type { SqlPrepared } from "@geo/sql";

/**
 * SQL-level prepared statements the proxy holds itself. PostgreSQL keeps a PREPARE on the
 * connection it ran on, so every EXECUTE would run that connection's region alone. A statement
 * that runs elsewhere, or in several regions, or where its arguments choose, is kept here
 * instead: its text, and its parameters' types as PostgreSQL resolved them at PREPARE. Each
 * EXECUTE then runs as the statement with its arguments written in as constants of those types,
 * routed like any other statement (bindSqlExecute in @geo/sql explains why that is exact).
 */
export class HeldSqlStatements {
  readonly #byName = new Map<string, SqlPrepared>();

  get size(): number {
    return this.#byName.size;
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  get(name: string): SqlPrepared | undefined {
    return this.#byName.get(name);
  }

  hold(name: string, prepared: SqlPrepared): void {
    this.#byName.set(name, prepared);
  }

  /** Like DEALLOCATE (not undone by ROLLBACK); true when the name was held. */
  forget(name: string): boolean {
    return this.#byName.delete(name);
  }

  /** DEALLOCATE ALL, DISCARD ALL. */
  clear(): void {
    this.#byName.clear();
  }
}
