import { performance } from "node:perf_hooks";
import type { PlanKind, RefusedShape, RouteDecision } from "@geo/admin";
import type { Analysis } from "@geo/sql";
import type { Route } from "../routing/router.js";
import { statementShape } from "./statement-shape.js";

/** Distinct shapes kept in each list (the dashboard shows them all). */
export const ROUTE_BOOK_SIZE = 50;

interface Decision {
  readonly shape: string;
  plan: PlanKind;
  /** One region as a string (no array per statement), several as the plan's own array. */
  regions: string | readonly string[];
  finish: string;
  count: number;
  /** `performance.now()` of the last statement. */
  lastAt: number;
}

interface Refusal {
  readonly shape: string;
  reason: string;
  sqlstate: string;
  count: number;
  lastAt: number;
}

/**
 * The recent routing decisions of real statements, one entry per shape, and the shapes refused
 * most often. Both lists are bounded ({@link ROUTE_BOOK_SIZE} entries): a new shape replaces the
 * one seen longest ago (decisions) or the one refused least often (refusals).
 *
 * Cheap per statement: the shape's text is computed once per analysis core, found again through
 * the analysis' `blocks` array, which every statement answered from one cached shape shares; a
 * statement of a known shape costs two map look-ups and a few assignments.
 */
export class RouteBook {
  readonly #shapes = new WeakMap<object, string>();
  readonly #decisions = new Map<string, Decision>();
  readonly #refusals = new Map<string, Refusal>();
  readonly #size: number;

  constructor(size = ROUTE_BOOK_SIZE) {
    this.#size = size;
  }

  /** One statement's route, decided from `analysis`, counted as `plan`. */
  record(analysis: Analysis, route: Route, plan: PlanKind, at: number): void {
    switch (route.kind) {
      case "region":
        this.#decide(analysis, plan, route.region, "relayed", at);
        return;
      case "multi-region": {
        const p = route.plan;
        const finish =
          p.kind === "scatter" ? p.merge.tier : p.kind === "distributed-write" ? "two-phase" : "each-region";
        this.#decide(analysis, plan, p.regions, finish, at);
        return;
      }
      case "error":
        if (route.refusal !== undefined) this.#refuse(analysis, route.refusal, route.error.code, at);
        return;
      case "deferred":
      case "local":
        return;
    }
  }

  /** Most recent first. */
  decisions(): RouteDecision[] {
    return [...this.#decisions.values()]
      .sort((a, b) => b.lastAt - a.lastAt)
      .map((d) => ({
        shape: d.shape,
        plan: d.plan,
        regions: typeof d.regions === "string" ? [d.regions] : [...d.regions],
        finish: d.finish,
        count: d.count,
        lastAt: isoAt(d.lastAt),
      }));
  }

  /** Most refused first. */
  refusedShapes(): RefusedShape[] {
    return [...this.#refusals.values()]
      .sort((a, b) => b.count - a.count || b.lastAt - a.lastAt)
      .map((r) => ({
        shape: r.shape,
        reason: r.reason,
        sqlstate: r.sqlstate,
        count: r.count,
        lastAt: isoAt(r.lastAt),
      }));
  }

  #shapeOf(analysis: Analysis): string {
    // An empty `blocks` may be a constant shared by unrelated statements: never a key then.
    const key = analysis.blocks.length > 0 ? analysis.blocks : undefined;
    if (key !== undefined) {
      const known = this.#shapes.get(key);
      if (known !== undefined) return known;
    }
    const shape = statementShape(analysis.text, analysis.paramCount);
    if (key !== undefined) this.#shapes.set(key, shape);
    return shape;
  }

  #decide(
    analysis: Analysis,
    plan: PlanKind,
    regions: string | readonly string[],
    finish: string,
    at: number,
  ): void {
    const shape = this.#shapeOf(analysis);
    const known = this.#decisions.get(shape);
    if (known !== undefined) {
      known.plan = plan;
      known.regions = regions;
      known.finish = finish;
      known.count++;
      known.lastAt = at;
      return;
    }
    if (this.#decisions.size >= this.#size) evict(this.#decisions, (d) => d.lastAt);
    this.#decisions.set(shape, { shape, plan, regions, finish, count: 1, lastAt: at });
  }

  #refuse(analysis: Analysis, reason: string, sqlstate: string, at: number): void {
    const shape = this.#shapeOf(analysis);
    const known = this.#refusals.get(shape);
    if (known !== undefined) {
      known.reason = reason;
      known.sqlstate = sqlstate;
      known.count++;
      known.lastAt = at;
      return;
    }
    // The least refused goes (the oldest of those): a shape refused often stays listed.
    if (this.#refusals.size >= this.#size) evict(this.#refusals, (r) => r.count * 1e12 + r.lastAt);
    this.#refusals.set(shape, { shape, reason, sqlstate, count: 1, lastAt: at });
  }
}

/** Removes the entry with the lowest `rank` (a scan over a bounded map, only when a new shape comes). */
function evict<T>(entries: Map<string, T>, rank: (entry: T) => number): void {
  let lowest: string | undefined;
  let lowestRank = Number.POSITIVE_INFINITY;
  for (const [shape, entry] of entries) {
    const r = rank(entry);
    if (r < lowestRank) {
      lowestRank = r;
      lowest = shape;
    }
  }
  if (lowest !== undefined) entries.delete(lowest);
}

function isoAt(perfNow: number): string {
  return new Date(performance.timeOrigin + perfNow).toISOString();
}
