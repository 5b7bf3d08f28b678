import type { TablePolicy } from "@geo/core";
import type { Analysis, TableRef } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";

/**
 * Replicated tables with a writer are written there alone and reach the other regions through
 * PostgreSQL replication, later. A session that wrote one would not see its own write when reading
 * the copy at home, so from its first write on, its reads of those tables go to the writer.
 */
export function noteWriterWrite(session: SessionPort, analysis: Analysis, region: string): void {
  for (const table of analysis.tables) {
    if (table.access !== "write") continue;
    const policy = policyOf(session, table);
    if (policy?.placement === "global_replicated" && policy.writer === region) {
      session.writerReads.add(policy.table);
    }
  }
}

/**
 * Where a read-only statement runs: the writer of a replicated table the session wrote, when the
 * statement reads only replicated tables (a read joined with partitioned rows stays where its rows are).
 */
export function readYourWrites(
  session: SessionPort,
  analysis: Analysis,
  region: string,
  readOnly: boolean,
): string {
  if (!readOnly || session.writerReads.size === 0) return region;
  let writer: string | undefined;
  for (const table of analysis.tables) {
    const policy = policyOf(session, table);
    if (policy?.placement !== "global_replicated") return region;
    if (session.writerReads.has(policy.table) && policy.writer !== undefined) writer ??= policy.writer;
  }
  return writer ?? region;
}

function policyOf(session: SessionPort, table: TableRef): TablePolicy | undefined {
  const tables = session.runtime.router.topology.tables;
  if (table.schema !== undefined) {
    const qualified = tables.get(`${table.schema}.${table.name}`);
    if (qualified !== undefined || table.schema !== "public") return qualified;
  }
  return tables.get(table.name);
}
