import type { SchemaDriftRegion, SchemaDriftStatus, SchemaDriftTable } from "@geo/admin";
import type { SchemaDriftReport } from "../server/schema-drift-report.js";

/**
 * The drift check's report as the admin port shows it: only the tables with a copy that differs
 * or is missing, each with those regions. A region that did not answer is not drift (its copy is
 * unknown, not different), so it is left out; SHOW SCHEMA lists it.
 *
 * @example
 * ```ts
 * schemaDriftStatus(drift.report()).tables; // [{ table: "public.orders", regions: [{ region: "us-east", ... }] }]
 * ```
 */
export function schemaDriftStatus(report: SchemaDriftReport): SchemaDriftStatus {
  const byTable = new Map<string, SchemaDriftRegion[]>();
  for (const row of report.rows) {
    if (row.status !== "differs" && row.status !== "missing") continue;
    let regions = byTable.get(row.table);
    if (regions === undefined) {
      regions = [];
      byTable.set(row.table, regions);
    }
    regions.push({ region: row.region, status: row.status, detail: row.detail });
  }
  const tables: SchemaDriftTable[] = [...byTable]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([table, regions]) => ({
      table,
      regions: regions.sort((a, b) => (a.region < b.region ? -1 : a.region > b.region ? 1 : 0)),
    }));
  return {
    checkedAt: report.checkedAt?.toISOString() ?? null,
    reference: report.reference ?? null,
    tables,
  };
}
