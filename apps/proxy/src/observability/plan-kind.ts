import type { PlanKind } from "@geo/admin";
import type { Route } from "../routing/router.js";

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
      switch (route.plan.kind) {
        case "scatter":
          return "scatter";
        case "distributed-write":
          return "distributed_write";
        case "each-region":
          return "each_region";
      }
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
