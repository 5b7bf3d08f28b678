import type { SchemaInfo } from "@geo/sql";
import type { Topology } from "../topology/topology.js";

/**
 * The analyzer's schema from the placement: every geo-partitioned table's key column. The
 * analyzer caches by statement shape against this, so build one analyzer per topology.
 */
export function schemaInfoFor(topology: Topology, aggregates?: ReadonlySet<string>): SchemaInfo {
  const keyColumns = new Map<string, string>();
  for (const policy of topology.tables.values()) {
    if (policy.placement === "geo_partitioned") keyColumns.set(policy.table, policy.key);
  }
  return aggregates === undefined ? { keyColumns } : { keyColumns, aggregates };
}
