import type { Plan } from "@geo/core";
import type { Analysis } from "@geo/sql";
import type { ReplicaService } from "./replica-service.js";

const REPLICA_KINDS: ReadonlySet<Analysis["kind"]> = new Set(["select", "explain"]);

/**
 * ROUTE's `replica` row: where a read of a fresh session (outside a transaction, nothing written)
 * would run now. Absent when the statement does not go to one region that has replicas.
 */
export function replicaRouteRow(
  analysis: Analysis,
  plan: Plan,
  replicas: ReplicaService | undefined,
): [string, string][] {
  if (replicas === undefined || plan.kind !== "single" || !replicas.pools.regionHasReplicas(plan.region))
    return [];
  if (!analysis.readOnly || analysis.needsPrimary !== undefined || plan.access !== "read-only")
    return [["replica", `no: runs on the primary (${analysis.needsPrimary ?? "writes"})`]];
  if (!REPLICA_KINDS.has(analysis.kind) || analysis.sessionEffects.length > 0)
    return [["replica", "no: runs on the primary (changes the session)"]];
  const choice = replicas.health.explainReplicaChoice(plan.region, { maxLagBytes: replicas.maxLagBytes });
  if (choice.chosen !== undefined)
    return [["replica", `${choice.chosen.address} (a read may run on a replica)`]];
  const reasons = choice.replicas.map((replica) => `${replica.address} ${replica.refusal ?? "?"}`).join(", ");
  return [["replica", `none qualifies, runs on the primary: ${reasons}`]];
}
