import type { SchemaInfo } from "@geo/sql";
import type { Topology } from "../topology/topology.js";

/**
 * The analyzer's schema from the placement: every geo-partitioned table's key column and the
 * keys' type. The analyzer caches by statement shape against this, so build one analyzer per
 * topology.
 */
export function schemaInfoFor(topology: Topology, aggregates?: ReadonlySet<string>): SchemaInfo {
  const keyColumns = new Map<string, string>();
  for (const policy of topology.tables.values()) {
    if (policy.placement === "geo_partitioned") keyColumns.set(policy.table, policy.key);
  }
  // Key values are compared as the key's type compares them ('05' = 5 for an integer key).
  const keyType = topology.routing.keyType;
  return aggregates === undefined ? { keyColumns, keyType } : { keyColumns, aggregates, keyType };
}
