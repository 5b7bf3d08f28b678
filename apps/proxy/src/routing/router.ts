import {
  type Directory,
  type DistributedWritePlan,
  type EachRegionPlan,
  type GatherConfig,
  type ParamValue,
  type Plan,
  plan,
  type ScatterPlan,
  type Topology,
} from "@geo/core";
import type { PgError } from "@geo/proto";
import { type Analysis, type Analyzer, SqlAnalysisError } from "@geo/sql";
import {
  fromAnalysisError,
  fromRefusal,
  internalError,
  refuseCopyFrom,
  refuseUnqualifiedTable,
} from "../errors/catalog.js";
import { DatabaseFunctions } from "./database-functions.js";
import { PLACED_BY_ROWS, shadowsPublic, unqualifiedNames } from "./search-path.js";

/** Where one statement goes, as the session acts on it. */
export type Route =
  | {
      readonly kind: "region";
      readonly region: string;
      readonly readOnly: boolean;
      /** Reads no table: any connection the session already holds may run it (FETCH, SELECT 1, ...). */
      readonly anywhere: boolean;
      /** Runs on the region's primary even when it only reads (several statements sent as one string). */
      readonly onPrimary?: boolean;
    }
  | { readonly kind: "local"; readonly what: "transaction" | "session" | "console" | "empty" }
  | { readonly kind: "deferred"; readonly params: readonly number[] }
  /**
   * Reads to combine (scatter-gather), writes to commit in two phases, or maintenance to run in
   * each region in turn: see `executor/multi-region.ts`.
   */
  | { readonly kind: "multi-region"; readonly plan: ScatterPlan | DistributedWritePlan | EachRegionPlan }
  | {
      readonly kind: "error";
      readonly error: PgError;
      /** The planner's reason (a RefusalCode of @geo/core), or the proxy's own for its refusals. */
      readonly refusal?: string;
    };

/** DDL commands that may create or change a function a statement could call. */
const CHANGES_FUNCTIONS = /FUNCTION|PROCEDURE|AGGREGATE|EXTENSION|LANGUAGE|SCHEMA|ROUTINE|OWNED|DATABASE/;

/** Routes remembered with their analysis for {@link Router.analysisOf} (a power of two). */
const RECENT_ROUTES = 64;

/** Analysis (cached by shape) and planning against the live topology and directory. */
export class Router {
  /** The last routes decided and their analyses, for {@link Router.analysisOf}. */
  readonly #recentRoutes: (Route | undefined)[] = new Array(RECENT_ROUTES);
  readonly #recentAnalyses: (Analysis | undefined)[] = new Array(RECENT_ROUTES);
  #recent = 0;
  /** The database's functions known to read no table (session/database-function-calls.ts asks it). */
  readonly functions = new DatabaseFunctions();
  /** Called when a statement routed may change a function (CREATE/ALTER/DROP FUNCTION, ...). */
  onFunctionChange: (() => void) | undefined;
  /** Called when a DDL is planned, so the regions' table shapes are compared again soon. */
  onSchemaChange: (() => void) | undefined;

  constructor(
    readonly analyzer: Analyzer,
    readonly topology: Topology,
    readonly directory: Directory,
    private readonly gather: GatherConfig | undefined,
    /**
     * Where a key with no directory entry may have rows when read: `anywhere` with a directory
     * store (rows written before it, or by other proxies). An INSERT always places a new key.
     */
    private readonly unlistedKeys: "placed" | "anywhere" = "placed",
  ) {}

  /** Analyses one statement; an unreadable one becomes the error to send. */
  analyze(text: string): Analysis | PgError {
    try {
      return this.analyzer.analyze(text);
    } catch (error) {
      return analysisFailure(error);
    }
  }

  /** Every statement of a simple-query string. */
  analyzeBatch(text: string): readonly Analysis[] | PgError {
    try {
      return this.analyzer.analyzeBatch(text);
    } catch (error) {
      return analysisFailure(error);
    }
  }

  plan(analysis: Analysis, params?: readonly ParamValue[]): Plan {
    return plan(analysis, {
      topology: this.topology,
      directory: this.directory,
      unlistedKeys: analysis.kind === "insert" ? "placed" : this.unlistedKeys,
      ...(params === undefined ? {} : { params }),
      ...(this.gather === undefined ? {} : { gather: this.gather }),
    });
  }

  /**
   * The route of a statement, given its bound parameters when there are any and the session's
   * search_path when the client set one.
   */
  route(analysis: Analysis, params?: readonly ParamValue[], searchPath?: readonly string[]): Route {
    const route = this.decide(analysis, params, searchPath);
    // Remembered for the metrics, which see the route alone (a ring: no allocation per statement).
    const at = this.#recent++ & (RECENT_ROUTES - 1);
    this.#recentRoutes[at] = route;
    this.#recentAnalyses[at] = analysis;
    return route;
  }

  /**
   * The analysis a route was decided from, while it is among the last few routes decided (the
   * session reports a route as soon as it is decided, a simple-query batch after its statements').
   */
  analysisOf(route: Route): Analysis | undefined {
    for (let back = 1; back <= RECENT_ROUTES && back <= this.#recent; back++) {
      const at = (this.#recent - back) & (RECENT_ROUTES - 1);
      if (this.#recentRoutes[at] === route) return this.#recentAnalyses[at];
    }
    return undefined;
  }

  private decide(analysis: Analysis, params?: readonly ParamValue[], searchPath?: readonly string[]): Route {
    if (analysis.kind === "ddl") {
      if (CHANGES_FUNCTIONS.test(analysis.command)) this.onFunctionChange?.();
      this.onSchemaChange?.();
    }
    if (searchPath !== undefined) {
      const refusal = this.refuseUnqualifiedElsewhere(analysis, searchPath);
      if (refusal !== null) return { kind: "error", error: refusal, refusal: "unqualified-name" };
    }
    const decided = this.plan(analysis, params);
    switch (decided.kind) {
      case "single":
        if (analysis.kind === "copy" && !this.copyFromFitsOneRegion(analysis)) {
          return { kind: "error", error: refuseCopyFrom(), refusal: "copy-from-across-regions" };
        }
        return {
          kind: "region",
          region: decided.region,
          readOnly: analysis.readOnly && decided.access === "read-only",
          anywhere: analysis.tables.length === 0 && analysis.hints.region === undefined,
        };
      case "local":
        return { kind: "local", what: decided.what };
      case "deferred":
        return { kind: "deferred", params: decided.params };
      case "refused":
        return { kind: "error", error: fromRefusal(decided.refusal), refusal: decided.refusal.code };
      case "scatter":
      case "each-region":
        return { kind: "multi-region", plan: decided };
      case "distributed-write":
        if (analysis.kind === "copy") {
          return { kind: "error", error: refuseCopyFrom(), refusal: "copy-from-across-regions" };
        }
        return { kind: "multi-region", plan: decided };
    }
  }

  /**
   * Where to describe a statement before its parameters are bound: a region that holds its
   * tables. With the parameters unknown any holder answers the same description.
   */
  describeRegion(analysis: Analysis): string {
    const decided = this.plan(analysis);
    switch (decided.kind) {
      case "single":
        return decided.region;
      case "scatter":
      case "distributed-write":
      case "each-region":
        return decided.regions[0] ?? this.topology.home.id;
      case "deferred":
      case "refused":
      case "local":
        return this.pinnedRegionOf(analysis) ?? this.topology.home.id;
    }
  }

  /**
   * A COPY FROM goes to one region as it is when every row it loads belongs there whatever its
   * key: a pinned table (or one placed by default), a replicated table at its writer, or any
   * table when there is only one region. A geo-partitioned table's rows would have to be split
   * by key, which the proxy does not do; a key hint cannot vouch for rows it has not read.
   */
  private copyFromFitsOneRegion(analysis: Analysis): boolean {
    const written = analysis.tables.filter((table) => table.access === "write");
    if (written.length === 0) return true;
    if (this.topology.regions.length === 1) return true;
    if (analysis.hints.key !== undefined) return false;
    return written.every((table) => {
      const policy =
        (table.schema === undefined
          ? undefined
          : this.topology.tables.get(`${table.schema}.${table.name}`)) ??
        this.topology.tables.get(table.name);
      return policy === undefined || policy.placement !== "geo_partitioned";
    });
  }

  /**
   * Unqualified table names are planned as the configuration's `table` (public) entries. Under a
   * search_path that searches another schema ahead of public, or leaves public out, PostgreSQL
   * may read another table than the one planned (`app.orders`, configured or not): refused, with
   * a qualified name as the fix. A statement has its names resolved by the catalog before it
   * gets here (session/qualified-names.ts), so only names no schema holds are left to refuse.
   */
  private refuseUnqualifiedElsewhere(analysis: Analysis, searchPath: readonly string[]): PgError | null {
    // With one region every name is read there, whichever table it is.
    if (this.topology.regions.length === 1) return null;
    const tables = this.topology.tables;
    if (!PLACED_BY_ROWS.has(analysis.kind)) {
      // DDL and maintenance reach every region that has the table, each resolving the name
      // itself: only a configured table of an earlier schema would be planned as another.
      for (const name of unqualifiedNames(analysis.tables)) {
        for (const schema of searchPath) {
          if (schema === "public") break;
          if (tables.has(`${schema}.${name}`)) return refuseUnqualifiedTable(name, `${schema}.${name}`);
        }
        const inPublic = tables.has(name) || tables.has(`public.${name}`);
        if (inPublic && !searchPath.includes("public")) return refuseUnqualifiedTable(name, `public.${name}`);
      }
      return null;
    }
    if (!shadowsPublic(searchPath)) return null;
    const first = searchPath.find((schema) => schema !== "pg_catalog" && schema !== "pg_temp");
    const [name] = unqualifiedNames(analysis.tables);
    if (name === undefined) return null;
    const configured = searchPath.find((schema) => tables.has(`${schema}.${name}`));
    return refuseUnqualifiedTable(name, `${configured ?? first ?? "public"}.${name}`);
  }

  private pinnedRegionOf(analysis: Analysis): string | undefined {
    for (const table of analysis.tables) {
      const policy = this.topology.tables.get(table.name);
      if (policy?.placement === "pinned") return policy.region;
    }
    return undefined;
  }
}

function analysisFailure(error: unknown): PgError {
  if (error instanceof SqlAnalysisError) return fromAnalysisError(error);
  return internalError(error);
}
