import type { PlanKind } from "@geo/admin";
import type { Route } from "../routing/router.js";

const MULTI_REGION_KINDS = {
  scatter: "scatter",
  "distributed-write": "distributed_write",
  "each-region": "each_region",
} as const satisfies Record<Extract<Route, { kind: "multi-region" }>["plan"]["kind"], PlanKind>;

/**
 * The plan kind a route is counted under. Statements the session answers itself count as
 * `one_region` (transaction control and session settings run where the session's connection is)
 * or `console`; an empty query is no statement at all (`null`).
 */
export function planKindOf(route: Route): PlanKind | null {
  switch (route.kind) {
    case "region":
    case "deferred":
      return "one_region";
    case "multi-region":
      return MULTI_REGION_KINDS[route.plan.kind];
    case "error":
      return "refused";
    case "local":
      switch (route.what) {
        case "console":
          return "console";
        case "transaction":
        case "session":
          return "one_region";
        case "empty":
          return null;
      }
  }
}
