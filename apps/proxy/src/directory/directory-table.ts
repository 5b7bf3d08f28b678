import { literal, qualified, textArray } from "./sql-text.js";

/**
 * The directory's table in one region: one row per key placed by this proxy or moved by it.
 * Every region has the table; a move rewrites the key's row in all of them, a first write records
 * it only in the region that received it (the others have no row, which guards read as "not mine
 * to refuse").
 */
export class DirectoryTable {
  /** The configured name, quoted (`geoproxy_directory` or `schema.table`). */
  readonly name: string;
  /** The configured name unquoted, for `to_regclass`. */
  readonly plain: string;

  constructor(table: string) {
    this.plain = table;
    this.name = qualified(table);
  }

  /** Idempotent: a proxy runs it at every start, in every region. */
  createSql(): string {
    const schema = this.plain.includes(".") ? this.plain.slice(0, this.plain.indexOf(".")) : undefined;
    const createSchema = schema === undefined ? "" : `CREATE SCHEMA IF NOT EXISTS ${qualified(schema)};\n`;
    return `${createSchema}CREATE TABLE IF NOT EXISTS ${this.name} (
  key text PRIMARY KEY,
  region text NOT NULL,
  moved_at timestamptz NOT NULL DEFAULT now()
)`;
  }

  /** The entries of `keys` (read after a move's fate was settled by recovery). */
  entriesSql(keys: readonly string[]): string {
    return `SELECT key, region FROM ${this.name} WHERE key = ANY(${textArray(keys)})`;
  }

  loadSql(): string {
    return `SELECT key, region FROM ${this.name}`;
  }

  /** First writes' entries; a key already listed keeps its entry. */
  recordSql(keys: readonly string[], region: string): string {
    const rows = keys.map((key) => `(${literal(key)}, ${literal(region)})`).join(", ");
    return `INSERT INTO ${this.name} (key, region) VALUES ${rows} ON CONFLICT (key) DO NOTHING`;
  }

  /** A move's entry, written in every region inside the move's transaction. */
  moveSql(keys: readonly string[], region: string): string {
    return `INSERT INTO ${this.name} (key, region, moved_at) SELECT k, ${literal(region)}, now() FROM unnest(${textArray(keys)}) AS k ON CONFLICT (key) DO UPDATE SET region = EXCLUDED.region, moved_at = EXCLUDED.moved_at`;
  }
}
