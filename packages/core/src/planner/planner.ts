import type { Analysis, KeyValue, Maintenance, TableRef } from "@geo/sql";
import type { GatherConfig, RegionId, TablePolicy } from "../config/types.js";
import type { Directory } from "../directory/directory.js";
import {
  type Refusal,
  refuseConfiguredTableChange,
  refuseCopyAcrossRegions,
  refuseCreateFromRowsAcrossRegions,
  refuseCrossRegionJoin,
  refuseCursorAcrossRegions,
  refuseExplainAcrossRegions,
  refuseHintWritesElsewhere,
  refuseKeyUpdate,
  refuseReplicatedWriteFromRows,
  refuseReplicatedWriteVolatile,
  refuseResidency,
  refuseSequenceIds,
  refuseSingleCopyWriteAcrossRegions,
  refuseUncombinable,
  refuseUnknownRegionHint,
  refuseUnplaceableInsertRow,
  refuseUnplacedTable,
  refuseUnsplittableInsert,
  refuseUtilityAcrossRegions,
  refuseWriteReadsElsewhere,
  refuseWritingCteAcrossRegions,
} from "../errors/refusals.js";
import { canonicalKey, shardFor } from "../topology/placement.js";
import { compareIds, type Topology } from "../topology/topology.js";
import { parseArrayLiteral } from "./array-literal.js";
import type { AccessMode, Plan, RegionStatement, ScatterPlan } from "./plan.js";

/** A bound parameter in text form; an array parameter may also be given already split. */
export type ParamValue = string | null | readonly (string | null)[];

export interface PlanContext {
  readonly topology: Topology;
  readonly directory: Directory;
  /** Bound parameters, `$1` first. Absent before Bind: a plan that needs them is deferred. */
  readonly params?: readonly ParamValue[];
  /**
   * Where a key with no directory entry may have rows. `placed` (default): where it would be
   * created, the home location's hashed shard. `anywhere`: every region, for deployments where
   * other proxies (other homes) created keys this directory does not list.
   */
  readonly unlistedKeys?: "placed" | "anywhere";
  readonly gather?: GatherConfig;
}

/** How a table occurrence is placed, resolved once per statement. */
type Resolved =
  | { readonly placement: "geo_partitioned"; readonly policy: TablePolicy & { placement: "geo_partitioned" } }
  | { readonly placement: "global_replicated"; readonly writer: RegionId | undefined; readonly name: string }
  | {
      readonly placement: "pinned";
      readonly region: RegionId;
      readonly strict: boolean;
      readonly name: string;
    };

/** A column whose sequence this DDL gives each region's stripe. */
interface StripedColumn {
  readonly schema: string | undefined;
  readonly table: string;
  readonly column: string;
}

const CATALOG_SCHEMAS = new Set(["pg_catalog", "information_schema"]);
const DEFER = -1;

function popcount(mask: number): number {
  let value = mask >>> 0;
  let count = 0;
  while (value !== 0) {
    value &= value - 1;
    count++;
  }
  return count;
}

function tableName(ref: TableRef): string {
  return ref.schema === undefined ? ref.name : `${ref.schema}.${ref.name}`;
}

function uniqueNames(refs: readonly TableRef[], indexes: Iterable<number>): string[] {
  const names: string[] = [];
  for (const index of indexes) {
    const name = tableName(refs[index]!);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * Decides where a statement runs. Pure: the same analysis, topology, directory and parameters
 * always give the same plan. Every rule over-approximates: a region that could hold a matching
 * row is always among the plan's regions.
 *
 * @example
 * const analysis = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'alice'");
 * plan(analysis, { topology, directory });
 * // { kind: "single", region: "eu-west", access: "read-only", sql: "SELECT * FROM users WHERE tenant_id = 'alice'" }
 */
export function plan(analysis: Analysis, context: PlanContext): Plan {
  switch (analysis.kind) {
    case "transaction":
      return { kind: "local", what: "transaction" };
    case "session":
      return { kind: "local", what: "session" };
    case "console":
      return { kind: "local", what: "console" };
    case "empty":
      return { kind: "local", what: "empty" };
    default:
      return new Planning(analysis, context).run();
  }
}

/**
 * DDL whose object lives in the server, not the database (roles, databases, tablespaces, the
 * server's configuration, subscriptions), or that PostgreSQL refuses inside a transaction block:
 * run once, where the session's statement goes, never repeated per region (regions may share a
 * server) nor inside a two-phase commit.
 */
const SERVER_WIDE_DDL: ReadonlySet<string> = new Set([
  "CREATEDB",
  "DROPDB",
  "ALTER DATABASE",
  "ALTER DATABASE SET",
  "ALTER DATABASE REFRESH COLL",
  "CREATE TABLE SPACE",
  "DROP TABLE SPACE",
  "ALTER TABLE SPACE OPTIONS",
  "ALTER SYSTEM",
  "CREATE ROLE",
  "ALTER ROLE",
  "ALTER ROLE SET",
  "DROP ROLE",
  "GRANT ROLE",
  "REASSIGN OWNED",
  "CREATE SUBSCRIPTION",
  "ALTER SUBSCRIPTION",
  "DROP SUBSCRIPTION",
]);

/**
 * Whether DDL that names no configured table changes the schema every region shares. A
 * temporary object lives in one session's backend (and cannot be part of a two-phase commit):
 * any mention of TEMP, TEMPORARY or pg_temp keeps the statement where the session is.
 */
function changesEverySchema(analysis: Analysis): boolean {
  if (SERVER_WIDE_DDL.has(analysis.command)) return false;
  return !/\b(temp|temporary|pg_temp)\b/i.test(analysis.text);
}

class Planning {
  private readonly topology: Topology;
  private readonly refs: readonly TableRef[];
  private readonly resolved: Resolved[] = [];
  private stripes: readonly StripedColumn[] = [];
  private readonly missingParams: number[] = [];
  private readonly access: AccessMode;

  constructor(
    private readonly analysis: Analysis,
    private readonly context: PlanContext,
  ) {
    this.topology = context.topology;
    this.refs = analysis.tables;
    this.access = analysis.readOnly && !analysis.hints.primary ? "read-only" : "read-write";
  }

  run(): Plan {
    const { analysis, topology } = this;
    const hintedRegion = analysis.hints.region;
    if (hintedRegion !== undefined) {
      if (!topology.hasRegion(hintedRegion))
        return refused(refuseUnknownRegionHint(hintedRegion, topology.regionIds));
      if (this.writesRows()) return this.checkHintedWrite(hintedRegion);
      return this.single(hintedRegion);
    }
    const hintedKey = analysis.hints.key;
    if (hintedKey !== undefined && this.writesRows()) {
      const conflict = this.keyHintConflict(hintedKey);
      if (conflict !== undefined) return refused(refuseHintWritesElsewhere(`key=${hintedKey}`, conflict));
    }
    for (const ref of this.refs) {
      const resolved = this.resolve(ref);
      if (resolved === undefined) return refused(refuseUnplacedTable(tableName(ref)));
      this.resolved.push(resolved);
    }
    if (analysis.maintenance !== undefined) return this.planMaintenance(analysis.maintenance);
    if (analysis.kind === "ddl") {
      const change = this.configuredTableChange();
      if (change !== undefined) return refused(change);
    }
    if (analysis.kind === "ddl" && topology.regions.length > 1) {
      const ids = this.sequenceIds();
      if ("refusal" in ids) return refused(ids.refusal);
      this.stripes = ids.stripes;
    }
    if (this.refs.length === 0) {
      if (analysis.kind === "ddl" && changesEverySchema(analysis) && topology.regions.length > 1) {
        // A function, type, view, index, schema or grant every region's statements may use:
        // changed in every region in one commit, never in the home region alone.
        const regions = topology.regionIds;
        return {
          kind: "distributed-write",
          regions,
          statements: regions.map((region) => ({ region, sql: analysis.text })),
          commit: "two-phase",
        };
      }
      return this.single(topology.home.id);
    }

    const masks = this.refs.map((ref, index) => this.tableMask(ref, index));
    const insertMasks = this.insertRowMasks();
    if (this.missingParams.length > 0) {
      return {
        kind: "deferred",
        params: [...new Set(this.missingParams)].sort((left, right) => left - right),
      };
    }
    if (typeof insertMasks === "object" && "refusal" in insertMasks) return insertMasks.refusal;
    const writes = this.refs.some((ref) => ref.access === "write");
    return writes ? this.planWrite(masks, insertMasks) : this.planRead(masks);
  }

  /**
   * A statement that writes table rows (DDL and maintenance are the operator's to steer, and
   * write nothing per key).
   */
  private writesRows(): boolean {
    return (
      this.analysis.kind !== "ddl" &&
      this.analysis.maintenance === undefined &&
      this.refs.some((ref) => ref.access === "write")
    );
  }

  /**
   * Maintenance reaches every copy of what it names: every region for a geo-partitioned table
   * (the regions of a hinted key only) and for a replicated one, the region of a pinned one, and
   * every region when it names no table or an index (whose table the text does not say).
   */
  private planMaintenance(maintenance: Maintenance): Plan {
    const { topology, analysis } = this;
    let mask = maintenance.scope === "everywhere" ? topology.allMask : 0;
    for (const resolved of this.resolved) {
      switch (resolved.placement) {
        case "pinned":
          mask |= topology.maskOf(resolved.region);
          break;
        case "global_replicated":
          mask |= topology.allMask;
          break;
        case "geo_partitioned": {
          const hintKey = analysis.hints.key;
          mask |= hintKey === undefined ? topology.allMask : this.keyMask(hintKey);
          break;
        }
      }
    }
    mask >>>= 0;
    if (mask === 0) mask = topology.maskOf(topology.home.id);
    if (popcount(mask) === 1) return this.single(this.regions(mask)[0]!);
    return {
      kind: "each-region",
      regions: this.regions(mask),
      sql: analysis.text,
      command: maintenance.name,
      outsideBlock: maintenance.outsideBlock,
      blockOnly: maintenance.blockOnly === true,
    };
  }

  /**
   * A write with a region hint runs only where its rows live anyway: planned without the hint,
   * it must land in the hinted region alone (or wait for its parameters, or be refused itself).
   */
  private checkHintedWrite(region: RegionId): Plan {
    const { region: _hinted, ...hints } = this.analysis.hints;
    const unhinted = plan({ ...this.analysis, hints }, this.context);
    if (unhinted.kind === "refused" && unhinted.refusal.code === "unplaced-table") {
      // Tables the configuration does not place (a temporary table, say) are where the hint
      // says: they may be written there, as long as no placed table is written with them.
      const placedWrite = this.refs.some((ref) => ref.access === "write" && this.resolve(ref) !== undefined);
      if (!placedWrite) return this.single(region);
    }
    if (unhinted.kind === "deferred" || unhinted.kind === "refused") return unhinted;
    if (unhinted.kind === "single" && unhinted.region === region) return this.single(region);
    const where =
      unhinted.kind === "single"
        ? unhinted.region
        : unhinted.kind === "local"
          ? "none"
          : unhinted.regions.join(", ");
    return refused(refuseHintWritesElsewhere(`region=${region}`, where));
  }

  /**
   * A key hint says which key a write's rows belong to: a key the statement itself names for a
   * geo-partitioned table it writes (a WHERE on the key, an INSERT row's key) must be that key,
   * or the rows would go to the hinted key's region. Returns the conflicting key, if any.
   */
  private keyHintConflict(hintKey: string): string | undefined {
    const keyType = this.topology.routing.keyType;
    const hinted = canonicalKey(hintKey, keyType);
    const differs = (value: KeyValue): boolean =>
      value.kind === "literal" && value.type !== "null" && canonicalKey(value.text, keyType) !== hinted;
    for (const [index, ref] of this.refs.entries()) {
      if (ref.access !== "write") continue;
      const resolved = this.resolve(ref);
      if (resolved?.placement !== "geo_partitioned") continue;
      if (ref.key.kind !== "any") {
        const other = ref.key.values.find(differs);
        if (other !== undefined && other.kind === "literal") return `key ${other.text}`;
      }
      if (this.analysis.insert?.table === index) {
        for (const key of this.analysis.insert.rowKeys) {
          if (key !== undefined && differs(key) && key.kind === "literal") return `key ${key.text}`;
        }
      }
    }
    return undefined;
  }

  private single(region: RegionId): Plan {
    return { kind: "single", region, access: this.access, sql: this.analysis.text };
  }

  /**
   * A rename or schema move of a table the configuration names, or a rename, drop or retype of a
   * geo-partitioned table's key column: the regions would then hold the rows under a name or key
   * the configuration does not route by.
   */
  private configuredTableChange(): Refusal | undefined {
    // Looked up by name, not among the statement's tables: a RENAME names its table apart from them.
    const tables = this.topology.tables;
    for (const change of this.analysis.tableChanges ?? []) {
      const policy =
        (change.schema !== undefined ? tables.get(`${change.schema}.${change.table}`) : undefined) ??
        (change.schema === undefined || change.schema === "public" ? tables.get(change.table) : undefined);
      if (policy === undefined) continue;
      const table = change.schema === undefined ? change.table : `${change.schema}.${change.table}`;
      if (change.kind === "rename") return refuseConfiguredTableChange(table, "renamed");
      if (change.kind === "set-schema") return refuseConfiguredTableChange(table, "moved to another schema");
      if (policy.placement === "geo_partitioned" && change.column === policy.key) {
        const what = { "rename-column": "renamed", "drop-column": "dropped", "retype-column": "retyped" }[
          change.kind
        ];
        return refuseConfiguredTableChange(table, `key column ${change.column} ${what}`);
      }
    }
    return undefined;
  }

  /**
   * The columns this DDL gives ids from a sequence on a geo-partitioned table: refused unless the
   * table's ids are striped, then each region's statement restripes them (`withStripes`).
   */
  private sequenceIds(): { readonly refusal: Refusal } | { readonly stripes: StripedColumn[] } {
    const stripes: StripedColumn[] = [];
    for (const id of this.analysis.idColumns ?? []) {
      const index = this.refs.findIndex((ref) => ref.name === id.table && ref.schema === id.schema);
      const resolved = this.resolved[index];
      if (resolved?.placement !== "geo_partitioned") continue;
      const table = id.schema === undefined ? id.table : `${id.schema}.${id.table}`;
      if (resolved.policy.ids !== "striped" || id.kind === "nextval")
        return {
          refusal: refuseSequenceIds(table, id.column, id.kind === "nextval" ? "DEFAULT nextval" : id.kind),
        };
      stripes.push({ schema: id.schema, table: id.table, column: id.column });
    }
    return { stripes };
  }

  /**
   * The DDL for one region, followed by what gives its new sequences that region's stripe: ids
   * from the region's position among [[topology.regions]] (1, 2, 3, ...), stepping by their number,
   * so no two regions, and no key moved between them, ever share an id.
   */
  private withStripes(sql: string, region: RegionId): string {
    if (this.stripes.length === 0) return sql;
    // The configuration's order, not the sorted ids: a region listed last keeps the others' stripes.
    const ids = this.topology.regions.map((r) => r.id);
    const start = ids.indexOf(region) + 1;
    const statements = this.stripes.map((stripe) => {
      const table = [stripe.schema, stripe.table]
        .filter((part): part is string => part !== undefined)
        .map((part) => `"${part.replace(/"/g, '""')}"`)
        .join(".");
      const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
      return `DO $geo_ids$ BEGIN EXECUTE pg_catalog.format('ALTER SEQUENCE %s INCREMENT BY %s START WITH %s RESTART WITH %s', pg_catalog.pg_get_serial_sequence(${literal(table)}, ${literal(stripe.column)}), ${ids.length}, ${start}, ${start}); END $geo_ids$`;
    });
    return [sql, ...statements].join("; ");
  }

  private resolve(ref: TableRef): Resolved | undefined {
    const tables = this.topology.tables;
    let policy: TablePolicy | undefined;
    if (ref.schema !== undefined) policy = tables.get(`${ref.schema}.${ref.name}`);
    if (policy === undefined && (ref.schema === undefined || ref.schema === "public"))
      policy = tables.get(ref.name);
    const name = tableName(ref);
    if (policy !== undefined) {
      switch (policy.placement) {
        case "geo_partitioned":
          return { placement: "geo_partitioned", policy };
        case "global_replicated":
          return { placement: "global_replicated", writer: policy.writer, name };
        case "pinned":
          return { placement: "pinned", region: policy.region, strict: policy.residency === "strict", name };
      }
    }
    // The system catalogs exist, alike enough, in every region: read them at home.
    if (
      (ref.schema !== undefined && CATALOG_SCHEMAS.has(ref.schema)) ||
      (ref.schema === undefined && ref.name.startsWith("pg_"))
    ) {
      return { placement: "global_replicated", writer: undefined, name };
    }
    const fallback = this.topology.routing.defaultPlacement;
    if (fallback === undefined) return undefined;
    switch (fallback.placement) {
      case "pinned":
        return { placement: "pinned", region: fallback.region, strict: false, name };
      case "global_replicated":
        return { placement: "global_replicated", writer: fallback.writer, name };
    }
  }

  /** Regions a table occurrence's rows can be in (geo and pinned), or where it is written (replicated). */
  private tableMask(ref: TableRef, index: number): number {
    const resolved = this.resolved[index]!;
    const { topology } = this;
    switch (resolved.placement) {
      case "pinned":
        return topology.maskOf(resolved.region);
      case "global_replicated":
        if (ref.access === "write" && this.analysis.kind !== "ddl" && resolved.writer !== undefined) {
          return topology.maskOf(resolved.writer);
        }
        return ref.access === "write" ? topology.allMask : 0;
      case "geo_partitioned": {
        const hintKey = this.analysis.hints.key;
        if (hintKey !== undefined) return this.keyMask(hintKey);
        // DDL changes every copy of what it names; a query it reads (CREATE TABLE AS) is read by its keys.
        if (this.analysis.kind === "ddl" && ref.access === "write") return topology.allMask;
        if (ref.key.kind === "any") return topology.allMask;
        let mask = 0;
        for (const value of ref.key.values) {
          const valueMask = this.valueMask(value);
          if (valueMask === DEFER) continue;
          mask |= valueMask;
        }
        return mask >>> 0;
      }
    }
  }

  private keyMask(key: string): number {
    const { topology } = this;
    const routing = topology.routing;
    const canonical = canonicalKey(key, routing.keyType);
    const listed = this.context.directory.lookup(canonical);
    if (listed !== undefined) return topology.maskOf(listed);
    if (this.context.unlistedKeys === "anywhere") return topology.allMask;
    return topology.maskOf(shardFor(canonical, routing.keyType, topology.homeShards));
  }

  /** Mask of one possible key value; DEFER when it waits for a parameter. */
  private valueMask(value: KeyValue): number {
    const all = this.topology.allMask;
    switch (value.kind) {
      case "literal":
        return value.type === "null" ? 0 : this.textMask(value.text);
      case "param": {
        const bound = this.param(value.index);
        if (bound === undefined) return DEFER;
        if (bound === null) return 0;
        return typeof bound === "string" ? this.textMask(bound) : all;
      }
      case "param-array": {
        const bound = this.param(value.index);
        if (bound === undefined) return DEFER;
        if (bound === null) return 0;
        const items = typeof bound === "string" ? parseArrayLiteral(bound) : bound;
        if (items === undefined) return all;
        let mask = 0;
        for (const item of items) if (item !== null) mask |= this.textMask(item);
        return mask >>> 0;
      }
    }
  }

  private textMask(text: string): number {
    // An integer key spelt as something that is not an integer cannot be looked up exactly.
    if (this.topology.routing.keyType === "integer" && !/^\s*[+-]?\d+\s*$/.test(text))
      return this.topology.allMask;
    return this.keyMask(text);
  }

  private param(index: number): ParamValue | undefined {
    const params = this.context.params;
    if (params === undefined) {
      this.missingParams.push(index);
      return undefined;
    }
    const bound = params[index - 1];
    return bound === undefined ? null : bound;
  }

  /** For INSERT ... VALUES into a geo-partitioned table: the region of each row. */
  private insertRowMasks(): number[] | undefined | { refusal: Plan } {
    const insert = this.analysis.insert;
    if (insert === undefined) return undefined;
    const resolved = this.resolved[insert.table];
    if (resolved?.placement !== "geo_partitioned") return undefined;
    const hintKey = this.analysis.hints.key;
    const rows: number[] = [];
    for (let row = 0; row < insert.rowKeys.length; row++) {
      const key = insert.rowKeys[row];
      if (hintKey !== undefined) {
        rows.push(this.keyMask(hintKey));
        continue;
      }
      if (key === undefined) {
        return {
          refusal: refused(refuseUnplaceableInsertRow(resolved.policy.table, row + 1, resolved.policy.key)),
        };
      }
      const mask = this.valueMask(key);
      // A row goes to exactly one region. A NULL key, or one that is not a value of the key's
      // type, is an error PostgreSQL raises wherever it goes: home gives that error once.
      rows.push(popcount(mask) === 1 ? mask : this.topology.maskOf(this.topology.home.id));
    }
    if (rows.length === 0) return undefined;
    return rows;
  }

  private regions(mask: number): RegionId[] {
    return this.topology.regionsOf(mask);
  }

  private planWrite(masks: readonly number[], insertRows: number[] | undefined): Plan {
    const { analysis, topology, refs } = this;
    const writeIndexes: number[] = [];
    const readIndexes: number[] = [];
    for (let index = 0; index < refs.length; index++) {
      (refs[index]!.access === "write" ? writeIndexes : readIndexes).push(index);
    }

    const links = new Links(refs.length, analysis.links);
    let target = 0;
    let replicatedEverywhere: string | undefined;
    for (const index of writeIndexes) {
      const resolved = this.resolved[index]!;
      const ref = refs[index]!;
      let mask = masks[index]!;
      if (resolved.placement === "geo_partitioned") {
        if (analysis.insert?.table === index && insertRows !== undefined) {
          mask = insertRows.reduce((all, row) => all | row, 0) >>> 0;
        } else if (analysis.kind === "insert" && ref.block === 0 && popcount(mask) > 1) {
          const copiesKey = analysis.links.some(
            (link) => link.via === "insert-select" && (link.left === index || link.right === index),
          );
          if (!copiesKey) return refused(refuseUnsplittableInsert(resolved.policy.table, this.regions(mask)));
        } else if (
          analysis.kind === "merge" &&
          analysis.mergeActions?.includes("insert") &&
          popcount(mask) > 1
        ) {
          return refused(refuseUnsplittableInsert(resolved.policy.table, this.regions(mask)));
        } else if (analysis.flags.writingCte && ref.block !== 0 && popcount(mask) > 1) {
          return refused(refuseWritingCteAcrossRegions(resolved.policy.table, this.regions(mask)));
        }
        if (analysis.flags.assignsKey && topology.regionIds.length > 1 && analysis.kind !== "insert") {
          return refused(refuseKeyUpdate(resolved.policy.table, resolved.policy.key));
        }
      }
      if (resolved.placement === "global_replicated" && popcount(mask) > 1)
        replicatedEverywhere = resolved.name;
      target |= mask;
    }
    target >>>= 0;
    if (target === 0) target = topology.maskOf(topology.home.id);

    if (replicatedEverywhere !== undefined) {
      const sources = readIndexes.filter((index) => this.resolved[index]!.placement !== "global_replicated");
      if (sources.length > 0)
        return refused(refuseReplicatedWriteFromRows(replicatedEverywhere, uniqueNames(refs, sources)));
      if (analysis.flags.volatileFunctions.length > 0) {
        return refused(refuseReplicatedWriteVolatile(replicatedEverywhere, analysis.flags.volatileFunctions));
      }
    }

    // What the write reads must be where it writes: a geo table linked to a written geo table by
    // key is (its rows meet the written rows in their own region); anything else must already
    // sit in the one region written.
    const single = popcount(target) === 1;
    const strays: number[] = [];
    for (const index of readIndexes) {
      const resolved = this.resolved[index]!;
      if (resolved.placement === "global_replicated") continue;
      const mask = masks[index]!;
      if (single && (mask & ~target) === 0) continue;
      if (
        resolved.placement === "geo_partitioned" &&
        writeIndexes.some(
          (write) => this.resolved[write]!.placement === "geo_partitioned" && links.connected(index, write),
        )
      ) {
        continue;
      }
      if (mask === 0) continue;
      strays.push(index);
    }
    if (strays.length > 0) {
      const spread = strays.reduce((all, index) => all | masks[index]!, target) >>> 0;
      return refused(
        refuseWriteReadsElsewhere(
          uniqueNames(refs, writeIndexes),
          uniqueNames(refs, strays),
          this.regions(spread),
        ),
      );
    }

    if (single) {
      return { kind: "single", region: this.regions(target)[0]!, access: "read-write", sql: analysis.text };
    }
    const regions = this.regions(target);
    for (const index of writeIndexes) {
      const resolved = this.resolved[index]!;
      const onlyIn =
        resolved.placement === "pinned"
          ? resolved.region
          : resolved.placement === "global_replicated" && analysis.kind !== "ddl"
            ? resolved.writer
            : undefined;
      if (onlyIn !== undefined)
        return refused(refuseSingleCopyWriteAcrossRegions(tableName(this.refs[index]!), onlyIn, regions));
    }
    switch (analysis.kind) {
      case "utility":
        return refused(refuseUtilityAcrossRegions(analysis.command, regions));
      case "copy":
        return refused(refuseCopyAcrossRegions("from", regions));
      case "explain":
        return refused(refuseExplainAcrossRegions(regions));
      default:
        break;
    }
    return {
      kind: "distributed-write",
      regions,
      statements: this.writeStatements(regions, insertRows),
      commit: "two-phase",
    };
  }

  private writeStatements(regions: readonly RegionId[], insertRows: number[] | undefined): RegionStatement[] {
    const { analysis, topology } = this;
    const insert = analysis.insert;
    if (insert === undefined || insertRows === undefined) {
      return regions.map((region) => ({ region, sql: this.withStripes(analysis.text, region) }));
    }
    return regions.map((region) => {
      const bit = topology.maskOf(region);
      const rows: number[] = [];
      insertRows.forEach((mask, row) => {
        if ((mask & bit) !== 0) rows.push(row);
      });
      if (rows.length === insertRows.length) return { region, sql: analysis.text, rows };
      return splitStatement(region, rows, insert.split.bind(insert));
    });
  }

  private planRead(masks: readonly number[]): Plan {
    const { analysis, topology, refs } = this;
    let spread = 0;
    let localOnly = true;
    for (let index = 0; index < refs.length; index++) {
      if (this.resolved[index]!.placement === "global_replicated") continue;
      localOnly = false;
      spread |= masks[index]!;
    }
    spread >>>= 0;
    if (localOnly || spread === 0) return this.single(topology.home.id);
    if (popcount(spread) === 1) return this.single(this.regions(spread)[0]!);

    const regions = this.regions(spread);
    switch (analysis.kind) {
      case "copy":
        return refused(refuseCopyAcrossRegions("to", regions));
      case "explain":
        return refused(refuseExplainAcrossRegions(regions));
      case "utility":
        if (analysis.command === "DECLARE CURSOR") return refused(refuseCursorAcrossRegions(regions));
        return refused(refuseUtilityAcrossRegions(analysis.command, regions));
      case "ddl":
        if (analysis.command === "CREATE TABLE AS" || analysis.command === "CREATE MATERIALIZED VIEW")
          return refused(refuseCreateFromRowsAcrossRegions(analysis.command, regions));
        // Schema is the same in every region that holds the tables: change it in one commit.
        return {
          kind: "distributed-write",
          regions,
          statements: regions.map((region) => ({ region, sql: this.withStripes(analysis.text, region) })),
          commit: "two-phase",
        };
      default:
        break;
    }

    let merge = analysis.merge;
    if (merge.tier === "refused") return refused(refuseUncombinable(merge.reason, merge.hint));
    const crossing = this.crossRegionPairs(masks);
    if (crossing.length > 0 && merge.tier !== "gather") {
      // No region can answer for its own rows: ship the rows home, when the statement allows it.
      const fallback = analysis.gather;
      if (fallback.tier === "refused")
        return refused(refuseCrossRegionJoin(uniqueNames(refs, crossing), regions));
      merge = fallback;
    }
    if (merge.tier === "scatter-write")
      return refused(
        refuseUncombinable("the statement writes while reading across regions", "run the write on its own"),
      );

    const home = topology.home.id;
    let homeFinishAllowed = true;
    for (let index = 0; index < refs.length; index++) {
      const resolved = this.resolved[index]!;
      const strict =
        (resolved.placement === "geo_partitioned" && resolved.policy.residency === "strict") ||
        (resolved.placement === "pinned" && resolved.strict);
      if (!strict) continue;
      const away = (masks[index]! & ~topology.maskOf(home)) >>> 0;
      if (away === 0) continue;
      const shipped =
        merge.tier === "gather"
          ? merge.sources.some((source) => source.table === index)
          : merge.tier === "partial-aggregate" && merge.movesRowData;
      if (shipped) return refused(refuseResidency(tableName(refs[index]!), this.regions(away), home));
      homeFinishAllowed = false;
    }

    if (merge.tier === "gather") {
      const gatherSources = merge.sources.map((source) => {
        const resolved = this.resolved[source.table]!;
        const mask =
          resolved.placement === "global_replicated" ? topology.maskOf(home) : masks[source.table]!;
        // Keys no region can hold (`k = 'a' AND k = 'b'`): no region has such rows, and home
        // answers so with its own none (it describes the rows, too).
        const sourceMask = mask === 0 ? topology.maskOf(home) : mask;
        return { table: source.table, regions: this.regions(sourceMask), sql: source.regionSql };
      });
      const gatherRegions = [
        ...new Set([...regions, ...gatherSources.flatMap((source) => source.regions)]),
      ].sort(compareIds);
      const plan: ScatterPlan = {
        kind: "scatter",
        regions: gatherRegions,
        statements: gatherSources.flatMap((source) =>
          source.regions.map((region) => ({ region, sql: source.sql })),
        ),
        merge,
        home,
        homeFinishAllowed,
        gatherSources: gatherSources.map(({ table, regions: sourceRegions }) => ({
          table,
          regions: sourceRegions,
        })),
        ...(this.context.gather === undefined ? {} : { gatherLimits: this.context.gather }),
      };
      return plan;
    }
    return {
      kind: "scatter",
      regions,
      statements: regions.map((region) => ({ region, sql: merge.regionSql })),
      merge,
      home,
      homeFinishAllowed,
    };
  }

  /**
   * Occurrences whose rows may have to meet across regions, so running the statement in each region
   * alone would miss matches: any two placed (geo-partitioned or pinned) occurrences that no key
   * link connects, unless they sit in different branches of one set operation (whose branches never
   * meet row by row), and whose regions together are more than one. The analysis' cross joins are
   * pairs without a link by definition, so they are covered.
   */
  private crossRegionPairs(masks: readonly number[]): number[] {
    const { analysis, refs } = this;
    const placed = (index: number) => this.resolved[index]!.placement !== "global_replicated";
    const links = new Links(refs.length, analysis.links);
    const involved = new Set<number>();
    for (let left = 0; left < refs.length; left++) {
      if (!placed(left)) continue;
      for (let right = left + 1; right < refs.length; right++) {
        if (!placed(right)) continue;
        if (popcount((masks[left]! | masks[right]!) >>> 0) <= 1) continue;
        const bothGeo =
          this.resolved[left]!.placement === "geo_partitioned" &&
          this.resolved[right]!.placement === "geo_partitioned";
        if (bothGeo && links.connected(left, right)) continue;
        if (separateSetOperands(analysis.blocks, refs[left]!.block, refs[right]!.block)) continue;
        involved.add(left);
        involved.add(right);
      }
    }
    // A replicated table whose rows are output where no placed table's rows are (a UNION ALL
    // branch, the outer query of an uncorrelated subquery over geo rows) would be answered once
    // per region and repeat: its rows must be gathered too.
    const placedBlocks = new Set<number>();
    for (let index = 0; index < refs.length; index++) if (placed(index)) placedBlocks.add(refs[index]!.block);
    for (let index = 0; index < refs.length; index++) {
      if (placed(index)) continue;
      let block: number | undefined = refs[index]!.block;
      let anchored = false;
      for (let steps = 0; block !== undefined && steps <= analysis.blocks.length; steps++) {
        if (placedBlocks.has(block)) {
          anchored = true;
          break;
        }
        block = analysis.blocks[block]?.parent;
      }
      if (anchored) continue;
      involved.add(index);
      for (let other = 0; other < refs.length; other++) if (placed(other)) involved.add(other);
    }
    return [...involved].sort((left, right) => left - right);
  }
}

/** Whether two blocks lie in different operands of one UNION / INTERSECT / EXCEPT. */
function separateSetOperands(blocks: Analysis["blocks"], left: number, right: number): boolean {
  if (left === right) return false;
  const path = (block: number): number[] => {
    const chain: number[] = [];
    let current: number | undefined = block;
    while (current !== undefined && chain.length <= blocks.length) {
      chain.push(current);
      current = blocks[current]?.parent;
    }
    return chain.reverse();
  };
  const leftPath = path(left);
  const rightPath = path(right);
  let depth = 0;
  while (depth < leftPath.length && depth < rightPath.length && leftPath[depth] === rightPath[depth]) depth++;
  const leftChild = leftPath[depth];
  const rightChild = rightPath[depth];
  if (leftChild === undefined || rightChild === undefined) return false;
  return blocks[leftChild]?.role === "set-operand" && blocks[rightChild]?.role === "set-operand";
}

function splitStatement(
  region: RegionId,
  rows: readonly number[],
  split: (rows: readonly number[]) => string,
): RegionStatement {
  let sql: string | undefined;
  return {
    region,
    rows,
    get sql(): string {
      sql ??= split(rows);
      return sql;
    },
  };
}

function refused(refusal: Refusal): Plan {
  return { kind: "refused", refusal };
}

/** Union-find over key links: occurrences in one set have equal keys wherever their rows meet. */
class Links {
  private readonly parent: number[];

  constructor(size: number, links: Analysis["links"]) {
    this.parent = Array.from({ length: size }, (_, index) => index);
    for (const link of links) this.union(link.left, link.right);
  }

  private find(index: number): number {
    let root = index;
    while (this.parent[root] !== root) root = this.parent[root]!;
    return root;
  }

  private union(left: number, right: number): void {
    if (left >= this.parent.length || right >= this.parent.length) return;
    this.parent[this.find(left)] = this.find(right);
  }

  connected(left: number, right: number): boolean {
    return this.find(left) === this.find(right);
  }
}
