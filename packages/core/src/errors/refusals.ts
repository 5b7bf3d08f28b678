import type { RegionId } from "../config/types.js";

export const REFUSAL_CODES = [
  "unplaced-table",
  "cross-region-join",
  "replicated-write-from-rows",
  "replicated-write-volatile",
  "residency",
  "uncombinable",
  "key-update",
  "unplaceable-insert-row",
  "unsplittable-insert",
  "unknown-region-hint",
  "hint-writes-elsewhere",
  "write-reads-elsewhere",
  "utility-across-regions",
  "cursor-across-regions",
  "create-from-rows-across-regions",
  "copy-across-regions",
  "explain-across-regions",
  "writing-cte-across-regions",
  "single-copy-write-across-regions",
  "sequence-ids-across-regions",
  "configured-table-change",
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/**
 * Why a statement will not run, as the client will read it: a real SQLSTATE, a reason and a hint
 * that names the fix. Plain data; the proxy turns it into an ErrorResponse in one place.
 */
export interface Refusal {
  readonly code: RefusalCode;
  readonly sqlstate: string;
  readonly reason: string;
  readonly hint: string;
}

const FEATURE_NOT_SUPPORTED = "0A000";
const INVALID_PARAMETER_VALUE = "22023";

function list(items: readonly string[]): string {
  return items.join(", ");
}

function refusal(code: RefusalCode, sqlstate: string, reason: string, hint: string): Refusal {
  return { code, sqlstate, reason, hint };
}

/** DDL giving a geo-partitioned table's column ids from a sequence, which every region has its own copy of. */
export function refuseSequenceIds(table: string, column: string, kind: string): Refusal {
  return refusal(
    "sequence-ids-across-regions",
    FEATURE_NOT_SUPPORTED,
    `column ${table}.${column} would take ids from a sequence (${kind}), and each region has its own copy of it: two regions would hand out the same ids`,
    `use uuid ids (DEFAULT gen_random_uuid()) or ids made with the key, or set ids = "striped" on the [[tables]] entry for ${table} so each region's sequence hands out its own stripe (docs/ids.md)`,
  );
}

/** DDL that would leave a configured table, or its key column, no longer where the configuration says. */
export function refuseConfiguredTableChange(table: string, change: string): Refusal {
  return refusal(
    "configured-table-change",
    FEATURE_NOT_SUPPORTED,
    `the statement changes table ${table}, which the geoproxy configuration names (${change}): the regions' tables and the configuration would disagree about where its rows live`,
    `keep the name (and the key column), or stop geoproxy, make the change on every region's server and in the [[tables]] entry for ${table} together, then start it again`,
  );
}

/** A table the configuration does not place, with no default placement configured. */
export function refuseUnplacedTable(table: string): Refusal {
  return refusal(
    "unplaced-table",
    FEATURE_NOT_SUPPORTED,
    `table ${table} has no placement policy`,
    `add a [[tables]] entry for ${table} with placement = "geo_partitioned", "global_replicated" or "pinned", or set [routing] default_placement`,
  );
}

/** Rows of these tables meet other than on equal keys, and may sit in different regions. */
export function refuseCrossRegionJoin(tables: readonly string[], regions: readonly RegionId[]): Refusal {
  return refusal(
    "cross-region-join",
    FEATURE_NOT_SUPPORTED,
    `the statement joins ${list(tables)} across regions ${list(regions)}`,
    "constrain every table to the same shard key, or make the smaller table global_replicated",
  );
}

/** Writing every copy of a replicated table from rows that differ between regions. */
export function refuseReplicatedWriteFromRows(table: string, sources: readonly string[]): Refusal {
  return refusal(
    "replicated-write-from-rows",
    FEATURE_NOT_SUPPORTED,
    `the statement would write each copy of replicated table ${table} from different rows of ${list(sources)}`,
    `write ${table} from constants or replicated tables, or give it a writer region so one copy is written and replication carries it`,
  );
}

/** A volatile function would give each copy of a replicated table a different value. */
export function refuseReplicatedWriteVolatile(table: string, functions: readonly string[]): Refusal {
  return refusal(
    "replicated-write-volatile",
    FEATURE_NOT_SUPPORTED,
    `${list(functions.map((name) => `${name}()`))} would give each copy of replicated table ${table} a different value`,
    `compute the value first and write it as a constant, or give ${table} a writer region`,
  );
}

/** A `residency = "strict"` table's rows would be shipped out of the region holding them. */
export function refuseResidency(table: string, from: readonly RegionId[], to: RegionId): Refusal {
  return refusal(
    "residency",
    FEATURE_NOT_SUPPORTED,
    `table ${table} has residency = "strict": answering would ship its rows from ${list(from)} to ${to}`,
    `constrain ${table} to the region of the rows (for example by key), or run the statement in each region with /* geo: region=<id> */`,
  );
}

/** The analysis found no exact way to combine the regions' answers. */
export function refuseUncombinable(reason: string, hint: string): Refusal {
  return refusal("uncombinable", FEATURE_NOT_SUPPORTED, reason, hint);
}

/** Assigning the key column would move rows to another region behind the directory's back. */
export function refuseKeyUpdate(table: string, key: string): Refusal {
  return refusal(
    "key-update",
    FEATURE_NOT_SUPPORTED,
    `the statement assigns ${table}.${key}, the key that decides which region holds the row`,
    "move a key with RELOCATE <key> TO '<region>'; rows move with it in every geo-partitioned table",
  );
}

/** An INSERT row whose key is an expression or DEFAULT: there is no region to send it to. */
export function refuseUnplaceableInsertRow(table: string, row: number, key: string): Refusal {
  return refusal(
    "unplaceable-insert-row",
    FEATURE_NOT_SUPPORTED,
    `row ${row} of the INSERT into ${table} has no ${key} value the proxy can read`,
    `give ${key} as a literal or a parameter, or add /* geo: key=<value> */ before the statement`,
  );
}

/** INSERT ... SELECT into a geo-partitioned table whose rows do not carry their key from the source. */
export function refuseUnsplittableInsert(table: string, regions: readonly RegionId[]): Refusal {
  return refusal(
    "unsplittable-insert",
    FEATURE_NOT_SUPPORTED,
    `the rows inserted into ${table} cannot be placed by key: they could belong to any of ${list(regions)}`,
    `copy ${table}'s key from a geo-partitioned source with the same key, constrain the key, or insert with VALUES`,
  );
}

/** A `region=` hint naming no region of the topology. */
export function refuseUnknownRegionHint(region: string, regions: readonly RegionId[]): Refusal {
  return refusal(
    "unknown-region-hint",
    INVALID_PARAMETER_VALUE,
    `the hint names region ${region}, which is not in the topology`,
    `use one of: ${list(regions)}`,
  );
}

/**
 * A hint that would send a write where its rows do not live: the rows would be written where
 * reads of them never look (or, for a table kept in every region, in one copy only).
 */
export function refuseHintWritesElsewhere(hint: string, where: string): Refusal {
  return refusal(
    "hint-writes-elsewhere",
    FEATURE_NOT_SUPPORTED,
    `the hint ${hint} would write rows outside the region that holds them (${where})`,
    "drop the hint: geoproxy routes writes to the region of their keys by itself (a hint may steer reads and DDL)",
  );
}

/** A write that runs in some regions but reads rows that may live in others. */
export function refuseWriteReadsElsewhere(
  written: readonly string[],
  read: readonly string[],
  regions: readonly RegionId[],
): Refusal {
  return refusal(
    "write-reads-elsewhere",
    FEATURE_NOT_SUPPORTED,
    `the statement writes ${list(written)} but reads ${list(read)} from rows spread over ${list(regions)}`,
    "constrain what it reads to the written key (or join on the shard key); a read that does not refer to the written row (an uncorrelated sub-query, a FROM/USING table) is read first when the write is sent as a simple query outside WITH",
  );
}

/** Maintenance commands do not run inside a transaction, so they cannot be committed across regions. */
export function refuseUtilityAcrossRegions(command: string, regions: readonly RegionId[]): Refusal {
  return refusal(
    "utility-across-regions",
    FEATURE_NOT_SUPPORTED,
    `${command} would have to run in ${list(regions)}, outside any transaction the proxy could commit`,
    `run it in each region with /* geo: region=<id> */ ${command}`,
  );
}

/**
 * CREATE TABLE AS and CREATE MATERIALIZED VIEW over rows of several regions would make, in each
 * region, a relation of that region's rows only: no copy would hold the query's answer.
 */
export function refuseCreateFromRowsAcrossRegions(command: string, regions: readonly RegionId[]): Refusal {
  return refusal(
    "create-from-rows-across-regions",
    FEATURE_NOT_SUPPORTED,
    `${command} would create, in each of ${list(regions)}, a relation of that region's rows only`,
    "create the table with CREATE TABLE, place it in the configuration, then fill it with INSERT INTO ... SELECT; or constrain the query to one key; or, for a copy per region computed from its own rows, create it in each region with /* geo: region=<id> */ and place it as geo_partitioned by its key",
  );
}

/**
 * A cursor lives on one server's connection: one declared over rows of several regions would
 * fetch only that region's rows. (Not a matter of transactions: DECLARE runs inside one.)
 */
export function refuseCursorAcrossRegions(regions: readonly RegionId[]): Refusal {
  return refusal(
    "cursor-across-regions",
    FEATURE_NOT_SUPPORTED,
    `DECLARE CURSOR over rows in ${list(regions)} is not supported: a cursor lives on one region's connection and would fetch that region's rows only`,
    "run the cursor's query itself (geoproxy combines its rows across regions; a driver's row-limited Execute pages through them), or constrain it to one region (filter on the key, or /* geo: region=<id> */)",
  );
}

/** COPY streams rows that would have to be placed or merged by key. */
export function refuseCopyAcrossRegions(direction: "from" | "to", regions: readonly RegionId[]): Refusal {
  return refusal(
    "copy-across-regions",
    FEATURE_NOT_SUPPORTED,
    direction === "from"
      ? `COPY ... FROM cannot place its rows by key across ${list(regions)}`
      : `COPY ... TO would need the rows of ${list(regions)}, and each region answers only for its own`,
    direction === "from"
      ? "send COPY ... FROM STDIN as a simple query, which geoproxy splits by key, or insert the rows with INSERT ... VALUES"
      : "constrain the COPY to one key, or use SELECT, which is combined across regions",
  );
}

/** EXPLAIN describes one server's plan; several regions have several. */
export function refuseExplainAcrossRegions(regions: readonly RegionId[]): Refusal {
  return refusal(
    "explain-across-regions",
    FEATURE_NOT_SUPPORTED,
    `EXPLAIN would have to run in ${list(regions)}, and each region plans only its own rows`,
    "constrain the statement to one key, or prefix /* geo: region=<id> */ to see one region's plan",
  );
}

/** A data-modifying WITH query whose rows could belong to several regions. */
export function refuseWritingCteAcrossRegions(table: string, regions: readonly RegionId[]): Refusal {
  return refusal(
    "writing-cte-across-regions",
    FEATURE_NOT_SUPPORTED,
    `the WITH query writing ${table} could touch rows in ${list(regions)}`,
    `constrain ${table} to one key in the WITH query, or run the write as its own statement`,
  );
}

/**
 * A statement run in several regions that also writes a table living in one region only (pinned,
 * or replicated with a writer): each region would write its own copy of that table.
 */
export function refuseSingleCopyWriteAcrossRegions(
  table: string,
  home: RegionId,
  regions: readonly RegionId[],
): Refusal {
  return refusal(
    "single-copy-write-across-regions",
    FEATURE_NOT_SUPPORTED,
    `the statement runs in ${list(regions)} but also writes ${table}, which is written in ${home} only`,
    `write ${table} in a statement of its own`,
  );
}
