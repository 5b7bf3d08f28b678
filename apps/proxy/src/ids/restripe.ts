import type { TablePolicy, Topology } from "@geo/core";
import type { Lease } from "@geo/pool";
import type { PgError } from "@geo/proto";
import { query, type RegionRunner } from "../directory/region-runner.js";
import { restripeIncomplete, restripePastMaximum, restripeRegionFailed } from "./restripe-errors.js";

/** How long RESTRIPE waits for a region's sequence lock before it gives up, changing nothing (ms). */
export const LOCK_TIMEOUT_MS = 2000;

/** One sequence as RESTRIPE left it. */
export interface RestripedSequence {
  readonly region: string;
  readonly column: string;
  readonly sequence: string;
  readonly increment: number;
  readonly start: number;
  /** The next id it hands out. */
  readonly next: bigint;
}

/** A sequence owned by a column of the table in one region, read while it is held. */
interface HeldSequence {
  readonly column: string;
  /** Quoted and schema-qualified, ready for SQL. */
  readonly sequence: string;
  /** The highest id the region has handed out or holds for this column. */
  readonly highest: bigint;
  readonly max: bigint;
}

/**
 * The table's sequences in one region, each locked against nextval (an ALTER SEQUENCE holds its
 * lock to the end of the transaction) before its last value and the column's highest id are
 * read, so no id handed out meanwhile can pass what was read.
 */
const OWNED_SEQUENCES_SQL = (table: string) => `SELECT a.attname AS column,
    pg_catalog.format('%I.%I', sn.nspname, sc.relname) AS sequence
  FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_class sc ON sc.oid = d.objid AND sc.relkind = 'S'
  JOIN pg_catalog.pg_namespace sn ON sn.oid = sc.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
  WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
    AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
    AND d.refobjid = pg_catalog.to_regclass(${literal(table)})
    AND d.deptype IN ('a', 'i')
  ORDER BY 1`;

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The configured table as SQL names it: `"schema"."table"` or `"table"`. */
function tableSql(policy: TablePolicy): string {
  return policy.table.split(".").map(quoteIdent).join(".");
}

/** The smallest id above `highest` in the stripe of `place` (1-based) among `count` regions. */
export function nextInStripe(highest: bigint, place: number, count: number): bigint {
  const n = BigInt(count);
  const first = highest + 1n;
  const offset = (((BigInt(place) - first) % n) + n) % n;
  return first + offset;
}

/**
 * RESTRIPE: gives every sequence of a striped table, in every region, the stripe of the regions
 * configured now (step = their number, start = the region's place among [[topology.regions]]),
 * restarting each above the highest id any region has handed out for that column. Every region
 * is held first (its sequences locked, so ids drawn there wait), then each is altered and
 * committed. A region that cannot be held changes nothing anywhere.
 */
export async function restripe(
  topology: Topology,
  runner: RegionRunner,
  policy: TablePolicy,
): Promise<RestripedSequence[] | PgError> {
  const regions = topology.regions.map((region) => region.id);
  const table = tableSql(policy);
  const leases = new Map<string, Lease>();
  const held = new Map<string, HeldSequence[]>();
  try {
    for (const region of regions) {
      try {
        const lease = await runner.acquire(region);
        leases.set(region, lease);
        held.set(region, await hold(lease, table, regions.length));
      } catch (error) {
        return restripeRegionFailed(region, error);
      }
    }
    const highest = new Map<string, bigint>();
    for (const sequences of held.values())
      for (const { column, highest: value } of sequences)
        if (value > (highest.get(column) ?? 0n)) highest.set(column, value);
    const plan: RestripedSequence[] = [];
    for (const [place, region] of regions.entries()) {
      for (const sequence of held.get(region) ?? []) {
        const next = nextInStripe(highest.get(sequence.column) ?? 0n, place + 1, regions.length);
        if (next > sequence.max) return restripePastMaximum(region, sequence.sequence, next, sequence.max);
        plan.push({
          region,
          column: sequence.column,
          sequence: sequence.sequence,
          increment: regions.length,
          start: place + 1,
          next,
        });
      }
    }
    for (const region of regions) {
      const lease = leases.get(region)!;
      const statements = plan
        .filter((row) => row.region === region)
        .map(
          (row) =>
            `ALTER SEQUENCE ${row.sequence} INCREMENT BY ${row.increment} START WITH ${row.start} RESTART WITH ${row.next}`,
        );
      try {
        if (statements.length > 0) await query(lease, statements.join("; "));
      } catch (error) {
        return restripeRegionFailed(region, error);
      }
    }
    const committed: string[] = [];
    for (const region of regions) {
      try {
        await query(leases.get(region)!, "COMMIT");
        committed.push(region);
      } catch (error) {
        return restripeIncomplete(region, committed, error);
      }
    }
    return plan;
  } finally {
    for (const lease of leases.values()) {
      if (lease.connection.usable && lease.connection.txStatus !== "I")
        await query(lease, "ROLLBACK").catch(() => undefined);
      if (lease.connection.usable && lease.connection.txStatus === "I") lease.release();
      else lease.discard("left inside a RESTRIPE transaction");
    }
  }
}

/** Opens the region's transaction, locks the table's sequences and reads how far each has gone. */
async function hold(lease: Lease, table: string, regionCount: number): Promise<HeldSequence[]> {
  // A transaction that drew an id holds the sequence's lock to its end: wait for it only so long,
  // since every region held before this one has its inserts waiting meanwhile.
  await query(lease, `BEGIN; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
  const owned = await query(lease, OWNED_SEQUENCES_SQL(table));
  const sequences: HeldSequence[] = [];
  for (const row of owned.rows) {
    const column = row["column"]!;
    const sequence = row["sequence"]!;
    // Takes the lock nextval waits for, until COMMIT.
    await query(lease, `ALTER SEQUENCE ${sequence} INCREMENT BY ${regionCount}`);
    const read = await query(
      lease,
      `SELECT (SELECT last_value FROM ${sequence})::text AS last,
         (SELECT max_value FROM pg_catalog.pg_sequences WHERE pg_catalog.format('%I.%I', schemaname, sequencename) = ${literal(sequence)})::text AS max,
         (SELECT pg_catalog.max(${quoteIdent(column)}) FROM ${table})::text AS highest`,
    );
    const values = read.rows[0]!;
    const last = BigInt(values["last"] ?? "0");
    const inTable =
      values["highest"] === null || values["highest"] === undefined ? 0n : BigInt(values["highest"]);
    sequences.push({
      column,
      sequence,
      highest: last > inTable ? last : inTable,
      max: BigInt(values["max"] ?? "9223372036854775807"),
    });
  }
  return sequences;
}
