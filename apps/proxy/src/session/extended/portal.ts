import type { DistributedPortal } from "../../distributed/distributed-portal.js";
import type { Leg } from "../../executor/leg.js";
import type { ScatterPortal } from "../../scatter/scatter-portal.js";
import type { ClientStatement } from "./client-statement.js";

/** A portal the client bound: where its Describe and Execute go. */
export interface Portal {
  readonly statement: ClientStatement;
  /** The backend connection holding it, or null for a statement the proxy answers itself. */
  readonly leg: Leg | null;
  readonly local: "transaction" | "session" | "console" | "empty" | null;
  /** A read spanning regions: Describe and Execute go to the scatter executor. */
  readonly scatter?: ScatterPortal;
  /** A write spanning regions: Execute runs it in each region, in one distributed transaction. */
  readonly distributed?: DistributedPortal;
}
