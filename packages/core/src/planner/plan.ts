import type { MergePlan } from "@geo/sql";
import type { GatherConfig, RegionId } from "../config/types.js";
import type { Refusal } from "../errors/refusals.js";

export const PLAN_KINDS = [
  "single",
  "scatter",
  "distributed-write",
  "each-region",
  "deferred",
  "refused",
  "local",
] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];

export const ACCESS_MODES = ["read-only", "read-write"] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

export interface RegionStatement {
  readonly region: RegionId;
  /**
   * What the region runs. For a split INSERT it is rebuilt from the parse tree on first read
   * (then kept): the decision itself costs no deparse, the executor and explain pay it once.
   */
  readonly sql: string;
  /** For a split INSERT: the 0-based VALUES rows this region receives, in order (RETURNING comes back in it). */
  readonly rows?: readonly number[];
}

/** The whole statement in one region, relayed as the backend answers. */
export interface SinglePlan {
  readonly kind: "single";
  readonly region: RegionId;
  /** read-only may go to a replica (a later issue); read-write needs the primary. */
  readonly access: AccessMode;
  readonly sql: string;
}

/** A read run in several regions and combined as `merge` says. */
export interface ScatterPlan {
  readonly kind: "scatter";
  readonly regions: readonly RegionId[];
  /** What each region runs; for a gather, one entry per shipped table and region. */
  readonly statements: readonly RegionStatement[];
  /** How the answers combine (never the refused or scatter-write tiers). */
  readonly merge: Exclude<MergePlan, { tier: "refused" } | { tier: "scatter-write" }>;
  /** Where a home finish runs. */
  readonly home: RegionId;
  /**
   * False when a strict-residency table is involved: the proxy may merge rows itself but must not
   * ship them to the home region. An ordered merge whose keys the proxy cannot compare is then refused.
   */
  readonly homeFinishAllowed: boolean;
  /** For a gather: the bounds past which it is refused. */
  readonly gatherLimits?: GatherConfig;
  /** For a gather: the regions each shipped table (index into the analysis' tables) is read from. */
  readonly gatherSources?: readonly { readonly table: number; readonly regions: readonly RegionId[] }[];
}

/** A write in several regions, committed in two phases. */
export interface DistributedWritePlan {
  readonly kind: "distributed-write";
  readonly regions: readonly RegionId[];
  readonly statements: readonly RegionStatement[];
  readonly commit: "two-phase";
}

/**
 * A maintenance command (VACUUM, ANALYZE, CHECKPOINT, REINDEX, CLUSTER, CREATE or DROP INDEX
 * CONCURRENTLY) run region after region, each on a connection of its own and outside any
 * transaction: each region's copy of a table is its own table, and several of these PostgreSQL
 * refuses inside a transaction block, so they cannot be one distributed transaction.
 */
export interface EachRegionPlan {
  readonly kind: "each-region";
  /** In this order: the first region's failure stops the rest. */
  readonly regions: readonly RegionId[];
  readonly sql: string;
  /** PostgreSQL's name for the command in its errors: `VACUUM`, `CREATE INDEX CONCURRENTLY`, ... */
  readonly command: string;
  /**
   * PostgreSQL refuses it inside a transaction block (25001): inside one it runs nowhere. The
   * others, inside a block, are written in each region as part of it and commit in two phases.
   */
  readonly outsideBlock: boolean;
  /** PostgreSQL accepts it only inside a transaction block (25P01): outside one it runs nowhere. */
  readonly blockOnly: boolean;
}

/** The route depends on parameters not bound yet (a Parse without Bind). */
export interface DeferredPlan {
  readonly kind: "deferred";
  /** 1-based parameter numbers the decision needs. */
  readonly params: readonly number[];
}

export interface RefusedPlan {
  readonly kind: "refused";
  readonly refusal: Refusal;
}

/** Handled by the session itself: transaction control, session settings, console commands, empty queries. */
export interface LocalPlan {
  readonly kind: "local";
  readonly what: "transaction" | "session" | "console" | "empty";
}

export type Plan =
  | SinglePlan
  | ScatterPlan
  | DistributedWritePlan
  | EachRegionPlan
  | DeferredPlan
  | RefusedPlan
  | LocalPlan;
