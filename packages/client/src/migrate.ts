import type postgres from "postgres";
import { migrationFailed, migrationGap, migrationInvalid } from "./errors.js";
import type { Sql } from "./probe.js";

/** One schema change. `up` is SQL text (several statements allowed) or a function given the transaction. */
export interface Migration {
  readonly id: string;
  readonly up: string | ((sql: postgres.TransactionSql) => Promise<unknown>);
}

export interface MigrateOptions {
  /** Tracking table, optionally schema-qualified; default `geo_client_migrations`. */
  readonly table?: string;
}

export interface MigrateResult {
  /** Ids this run applied, in order. */
  readonly applied: readonly string[];
  /** Ids already recorded before this run (or by a concurrent runner during it). */
  readonly skipped: readonly string[];
}

/** Only the pool that migrations may use; taking no more makes reaching a replica impossible by type. */
export interface Writable {
  write(): Sql;
}

const defaultTable = "geo_client_migrations";
/** First half of every advisory lock key this runner takes ("geo" in ASCII). */
const lockClass = 0x67656f;

/** FNV-1a of the table name, as a signed int4: runners of one table serialize, other tables do not. */
function lockKey(table: string): number {
  let hash = 0x811c9dc5;
  for (const char of table) {
    hash ^= char.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

function validate(migrations: readonly Migration[], table: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(table))
    throw migrationInvalid(
      `tracking table ${JSON.stringify(table)} is not a plain (optionally schema-qualified) name`,
    );
  const seen = new Set<string>();
  for (const [index, migration] of migrations.entries()) {
    if (typeof migration.id !== "string" || migration.id.trim() === "")
      throw migrationInvalid(`migration at position ${index} has no id`);
    if (seen.has(migration.id)) throw migrationInvalid(`id ${JSON.stringify(migration.id)} appears twice`);
    seen.add(migration.id);
  }
}

/**
 * Applies, in list order, every migration whose id the tracking table does not hold yet. Each
 * runs in its own transaction together with the row that records it, so a failure leaves no half
 * of either. Runs only on `cluster.write()`: a replica refuses DDL, and a schema change must
 * reach the server that replicates it.
 *
 * Several processes may start together: each migration's transaction takes a transaction-level
 * advisory lock and re-reads the table, so exactly one of them applies it. Ids recorded by a newer
 * release and absent from this list are left alone (a rolling deploy runs both lists).
 *
 * @throws ClientError `migration_gap` when a listed id is missing while a later listed one is recorded;
 *   `migration_failed` (carrying the server's SQLSTATE) when a migration fails.
 * @example
 * await migrate(cluster, [
 *   { id: "001_orders", up: "create table orders (id bigint primary key, total numeric not null)" },
 *   { id: "002_orders_customer", up: "alter table orders add column customer text" },
 * ]);
 */
export async function migrate(
  cluster: Writable,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const table = options.table ?? defaultTable;
  validate(migrations, table);
  const sql = cluster.write();
  const key = lockKey(table);

  // CREATE TABLE IF NOT EXISTS races with itself (both see no table, one hits a catalog unique
  // violation), so even the tracking table is created under the lock.
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${lockClass}::int4, ${key}::int4)`;
    // Quiets the "already exists, skipping" NOTICE that every run after the first would print.
    await tx`set local client_min_messages = warning`;
    await tx`create table if not exists ${tx(table)} (id text primary key, applied_at timestamptz not null default now())`;
  });
  const recorded = new Set((await sql<{ id: string }[]>`select id from ${sql(table)}`).map((row) => row.id));

  let lastRecorded = -1;
  for (const [index, migration] of migrations.entries()) if (recorded.has(migration.id)) lastRecorded = index;
  for (const migration of migrations.slice(0, lastRecorded + 1)) {
    const later = migrations[lastRecorded];
    if (!recorded.has(migration.id) && later !== undefined) throw migrationGap(migration.id, later.id);
  }

  const applied: string[] = [];
  const skipped: string[] = migrations.slice(0, lastRecorded + 1).map((migration) => migration.id);
  for (const migration of migrations.slice(lastRecorded + 1)) {
    const ran = await sql
      .begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${lockClass}::int4, ${key}::int4)`;
        const already = await tx`select 1 from ${tx(table)} where id = ${migration.id}`;
        if (already.length > 0) return false;
        if (typeof migration.up === "string") await tx.unsafe(migration.up);
        else await migration.up(tx);
        await tx`insert into ${tx(table)} (id) values (${migration.id})`;
        return true;
      })
      .catch((error: unknown) => {
        throw migrationFailed(migration.id, error);
      });
    (ran ? applied : skipped).push(migration.id);
  }
  return { applied, skipped };
}
