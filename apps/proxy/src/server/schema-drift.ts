import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { Fact } from "../observability/alert-book.js";
import type { SchemaDriftReport, SchemaDriftRow } from "./schema-drift-report.js";

export type { SchemaDriftReport, SchemaDriftRow } from "./schema-drift-report.js";

/** How often the regions' schemas are compared again after the check at start. */
export const SCHEMA_CHECK_INTERVAL_MS = 60_000;

/** How long after a DDL is planned the regions are compared again. */
export const DDL_SETTLE_MS = 500;

/** A table's shape in one region: its live columns in order, and its indexes without their names. */
interface TableShape {
  readonly columns: string[];
  readonly indexes: Set<string>;
}

/**
 * Every region holds its own copy of each geo-partitioned and replicated table, and the proxy
 * plans as if the copies were alike: the same columns in the same order (an INSERT without a
 * column list, COPY, `SELECT *` merged across regions) and the same indexes (the same unique
 * constraints, so ON CONFLICT and duplicate keys behave alike everywhere). A copy changed directly
 * on one server, or a DDL that failed in one region, breaks that silently. This check compares
 * every region's copies with the reference region's, at start and every minute, and states each
 * difference as a `schema_drift` alert (subject `region/table`); `SHOW SCHEMA` lists them all.
 * Pinned tables live in one region and have nothing to be compared with.
 */
export class SchemaDrift {
  #report: SchemaDriftReport = { reference: undefined, rows: [], checkedAt: undefined };
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly topology: Topology,
    private readonly pools: RegionPools,
    private readonly log: Logger,
  ) {}

  /** The configured tables every region has a copy of, as the catalog names them. */
  private tables(): string[] {
    const names: string[] = [];
    for (const policy of this.topology.tables.values())
      if (policy.placement !== "pinned" && !names.includes(qualified(policy.table)))
        names.push(qualified(policy.table));
    return names.sort();
  }

  /** Reads the regions named (by default every one) and compares them; the others are unknown. */
  async check(timeoutMs: number, regions?: readonly string[]): Promise<void> {
    const tables = this.tables();
    if (tables.length === 0) return;
    const shapes = new Map<string, Map<string, TableShape> | Error>();
    await Promise.all(
      this.topology.regions.map(async (region) => {
        shapes.set(
          region.id,
          regions === undefined || regions.includes(region.id)
            ? await this.read(region.id, region.primary.user ?? "postgres", tables, timeoutMs)
            : new Error("unreachable at start"),
        );
      }),
    );
    const ordered = [this.topology.home.id, ...this.topology.regions.map((r) => r.id)];
    const reference = ordered.find((id) => !(shapes.get(id) instanceof Error));
    const rows: SchemaDriftRow[] = [];
    const facts: Fact[] = [];
    const referenceShapes =
      reference === undefined ? undefined : (shapes.get(reference) as Map<string, TableShape>);
    for (const table of tables) {
      const expected = referenceShapes?.get(table);
      for (const region of this.topology.regions) {
        const found = shapes.get(region.id);
        let row: SchemaDriftRow;
        if (found instanceof Error || found === undefined)
          row = { table, region: region.id, status: "unknown", detail: found?.message ?? "not read" };
        else {
          const shape = found.get(table);
          if (shape === undefined)
            row = {
              table,
              region: region.id,
              status: "missing",
              detail: `no table ${table} in ${region.id}`,
            };
          else if (expected === undefined)
            row = {
              table,
              region: region.id,
              status: "differs",
              detail: `no table ${table} in ${reference}`,
            };
          else {
            const differences =
              region.id === reference ? [] : compareShapes(shape, expected, reference ?? "");
            row = {
              table,
              region: region.id,
              status: differences.length === 0 ? "same" : "differs",
              detail: differences.join("; "),
            };
          }
        }
        rows.push(row);
        if (row.status === "differs" || row.status === "missing") {
          const message = `${table} in ${region.id} is not like its copy in ${reference}: ${row.detail} (run the same DDL in every region, through geoproxy; SHOW SCHEMA)`;
          facts.push({ name: "schema_drift", subject: `${region.id}/${table}`, message });
        }
      }
    }
    for (const fact of facts)
      if (!this.#facts.some((known) => known.subject === fact.subject && known.message === fact.message))
        this.log.warn({ subject: fact.subject }, fact.message);
    this.#facts = facts;
    this.#report = { reference, rows, checkedAt: new Date() };
  }

  #facts: Fact[] = [];

  #timeoutMs = 0;
  #soon: NodeJS.Timeout | undefined;
  #again = false;
  #closed = false;

  /** Checks again every `intervalMs` until `close()`; a check still running is not doubled. */
  start(timeoutMs: number, intervalMs = SCHEMA_CHECK_INTERVAL_MS): void {
    this.#timeoutMs = timeoutMs;
    this.#timer = setInterval(() => this.#run(), intervalMs);
    this.#timer.unref();
  }

  /**
   * A DDL was planned: check again once it has had time to commit. The hook fires when the DDL is
   * planned, before any region ran it, so the check waits `settleMs` (later DDLs push it back), and
   * a check already running is followed by one more.
   */
  soon(settleMs = DDL_SETTLE_MS): void {
    if (this.#closed || this.#timer === undefined) return;
    if (this.#soon !== undefined) clearTimeout(this.#soon);
    this.#soon = setTimeout(() => {
      this.#soon = undefined;
      this.#run();
    }, settleMs);
    this.#soon.unref();
  }

  #run(): void {
    if (this.#closed) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.check(this.#timeoutMs)
      .catch((error: unknown) => this.log.warn({ err: error }, "the schema drift check failed"))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.#run();
        }
      });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#soon !== undefined) clearTimeout(this.#soon);
    this.#timer = undefined;
    this.#soon = undefined;
    await this.#running;
  }

  report(): SchemaDriftReport {
    return this.#report;
  }

  facts(): Fact[] {
    return this.#facts;
  }

  private async read(
    region: string,
    user: string,
    tables: readonly string[],
    timeoutMs: number,
  ): Promise<Map<string, TableShape> | Error> {
    try {
      const lease = await this.pools.acquire(region, user);
      try {
        const rows = (await lease.connection.simpleQuery(shapeSql(tables), { timeoutMs })).rows;
        const shapes = new Map<string, TableShape>();
        for (const [table, kind, text] of rows) {
          if (table === null || table === undefined) continue;
          let shape = shapes.get(table);
          if (shape === undefined) {
            shape = { columns: [], indexes: new Set() };
            shapes.set(table, shape);
          }
          if (text === null || text === undefined) continue;
          if (kind === "column") shape.columns.push(text);
          else if (kind === "index") shape.indexes.add(text);
        }
        return shapes;
      } finally {
        lease.release();
      }
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}

/** `users` is `public.users`, as the catalog's qualified names read. */
function qualified(table: string): string {
  return table.includes(".") ? table : `public.${table}`;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * One row per live column (`name type [not null]`, in column order) and per index (its
 * definition with its own name and the table's left out, which may differ between regions
 * without changing behaviour) of each table that exists; a table that does not exist has none.
 */
function shapeSql(tables: readonly string[]): string {
  const names = `ARRAY[${tables.map(literal).join(", ")}]::text[]`;
  return `SELECT t.name, 'column', pg_catalog.quote_ident(a.attname) || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END, a.attnum::int
  FROM pg_catalog.unnest(${names}) AS t(name)
  JOIN pg_catalog.pg_attribute a ON a.attrelid = pg_catalog.to_regclass(t.name) AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT t.name, 'index', pg_catalog.replace(pg_catalog.pg_get_indexdef(i.indexrelid), ' INDEX ' || pg_catalog.quote_ident(c.relname) || ' ON ', ' INDEX ON '), 0
  FROM pg_catalog.unnest(${names}) AS t(name)
  JOIN pg_catalog.pg_index i ON i.indrelid = pg_catalog.to_regclass(t.name)
  JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
ORDER BY 1, 2, 4, 3`;
}

/** What makes `shape` differ from `expected` (the reference region's), each in a few words. */
function compareShapes(shape: TableShape, expected: TableShape, reference: string): string[] {
  const differences: string[] = [];
  const name = (column: string) => column.split(" ")[0] ?? column;
  const expectedByName = new Map(expected.columns.map((c) => [name(c), c]));
  const foundByName = new Map(shape.columns.map((c) => [name(c), c]));
  for (const [column, definition] of expectedByName) {
    const found = foundByName.get(column);
    if (found === undefined) differences.push(`column ${column} missing (${definition} in ${reference})`);
    else if (found !== definition) differences.push(`column ${found} (${definition} in ${reference})`);
  }
  for (const [column, definition] of foundByName)
    if (!expectedByName.has(column)) differences.push(`extra column ${definition}`);
  if (differences.length === 0 && shape.columns.join(",") !== expected.columns.join(","))
    differences.push(`columns in another order (${shape.columns.map(name).join(", ")})`);
  for (const index of expected.indexes)
    if (!shape.indexes.has(index)) differences.push(`index missing: ${index}`);
  for (const index of shape.indexes)
    if (!expected.indexes.has(index)) differences.push(`extra index: ${index}`);
  return differences;
}
