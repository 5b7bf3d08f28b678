import { isAggregateCall, planPartialAggregate } from "./aggregate-plan.js";
import type { Analysis, ConcatPlan, GatherPlan, MergePlan, RefusedPlan, SchemaInfo } from "./analysis.js";
import { type Node, nodeAs, type SelectStmt } from "./ast.js";
import { deparse } from "./deparse.js";
import { describeViolation, distributionOf } from "./distribution.js";
import { VOLATILE_FUNCTIONS } from "./function-catalog.js";
import { planGatherFor } from "./gather-plan.js";
import { regionLimit, withRegionLimit } from "./limit-rewrite.js";
import { planOrdered } from "./ordered-plan.js";
import { parseOne } from "./parser.js";
import {
  refuseInsertValuesBroadcast,
  refuseLockingAcrossRegions,
  refuseNonRegionalWrite,
  refuseNotCombinable,
  refuseNotRegional,
  refusePerRegionUtility,
  refuseSelectIntoAcrossRegions,
  refuseVolatileAcrossRegions,
  refuseWritingCteAcrossRegions,
} from "./refusals.js";
import { nonRegionalBlock } from "./regional-safety.js";
import { StatementWalker } from "./statement-walker.js";

/** Sequence and seed state lives in each region, so these differ per region even per row. */
const PER_REGION_STATE_FUNCTIONS: ReadonlySet<string> = new Set([
  "nextval",
  "setval",
  "currval",
  "lastval",
  "setseed",
]);

interface TopLevelFacts {
  aggregates: boolean;
  windows: boolean;
  subLinksBesideAggregates: boolean;
  /** Volatile calls outside the top block's own per-row expressions (sub-queries, CTEs, LIMIT). */
  volatileOncePerStatement: Set<string>;
}

/** Scans the top block's own clauses (not its sub-queries) for aggregates and windows. */
function topLevelFacts(select: SelectStmt, schema: SchemaInfo): TopLevelFacts {
  const facts: TopLevelFacts = {
    aggregates: false,
    windows: false,
    subLinksBesideAggregates: false,
    volatileOncePerStatement: new Set(),
  };
  let subLinks = false;
  let inOutput = false;
  const visit = (value: unknown, perRow: boolean): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, perRow);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const child = record[key];
      if (key === "SubLink") {
        if (inOutput) subLinks = true;
        collectVolatile(child, facts.volatileOncePerStatement);
        continue;
      }
      if (key === "FuncCall") {
        const fn = child as Parameters<typeof isAggregateCall>[0];
        if (fn.over !== undefined) facts.windows = true;
        else if (isAggregateCall(fn, schema)) facts.aggregates = true;
        const name = functionName(fn);
        if (!perRow && VOLATILE_FUNCTIONS.has(name)) facts.volatileOncePerStatement.add(name);
      }
      visit(child, perRow);
    }
  };
  // Sub-queries in the select list, HAVING and ORDER BY would run in the home finish, away from
  // the rows they read; those in WHERE run in each region beside their rows.
  inOutput = true;
  visit(select.targetList, true);
  visit(select.havingClause, true);
  visit(select.sortClause, true);
  inOutput = false;
  visit(select.whereClause, true);
  visit(select.groupClause, true);
  visit(select.windowClause, true);
  visit(select.distinctClause, true);
  visit(select.limitCount, false);
  visit(select.limitOffset, false);
  collectVolatile(select.withClause, facts.volatileOncePerStatement);
  for (const item of select.fromClause ?? [])
    collectVolatileInSubqueries(item, facts.volatileOncePerStatement);
  facts.subLinksBesideAggregates = subLinks && facts.aggregates;
  return facts;
}

function functionName(fn: { funcname?: Node[] }): string {
  const last = fn.funcname?.[fn.funcname.length - 1];
  return (nodeAs(last, "String")?.sval ?? "").toLowerCase();
}

function collectVolatile(value: unknown, into: Set<string>): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const v of value) collectVolatile(v, into);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (key === "FuncCall") {
      const name = functionName(record[key] as { funcname?: Node[] });
      if (VOLATILE_FUNCTIONS.has(name)) into.add(name);
    }
    collectVolatile(record[key], into);
  }
}

/** Sub-queries in FROM run once per region; their volatile calls are per statement. */
function collectVolatileInSubqueries(item: unknown, into: Set<string>): void {
  if (item === null || typeof item !== "object") return;
  if (Array.isArray(item)) {
    for (const v of item) collectVolatileInSubqueries(v, into);
    return;
  }
  const record = item as Record<string, unknown>;
  for (const key in record) {
    if (key === "RangeSubselect" || key === "SubLink") {
      collectVolatile(record[key], into);
      continue;
    }
    collectVolatileInSubqueries(record[key], into);
  }
}

function isUnionAllOnly(select: SelectStmt): boolean {
  const op = select.op ?? "SETOP_NONE";
  if (op === "SETOP_NONE") return true;
  if (op !== "SETOP_UNION" || select.all !== true) return false;
  return (
    select.larg !== undefined &&
    select.rarg !== undefined &&
    isUnionAllOnly(select.larg) &&
    isUnionAllOnly(select.rarg) &&
    (select.larg.sortClause?.length ?? 0) === 0 &&
    (select.rarg.sortClause?.length ?? 0) === 0 &&
    select.larg.limitCount === undefined &&
    select.rarg.limitCount === undefined
  );
}

function concat(select: SelectStmt, text: string): ConcatPlan | undefined {
  const limit = regionLimit(select);
  if (limit === "unsupported") return undefined;
  if (limit.spec === undefined)
    return { tier: "concat", regionSql: text, limit: undefined, movesRowData: false };
  return {
    tier: "concat",
    regionSql: deparse({ SelectStmt: withRegionLimit(select, limit) }),
    limit: limit.spec,
    movesRowData: false,
  };
}

/**
 * How the answer of a statement that runs in several regions is combined, in the cheapest tier
 * that is exact. Assumes each region can answer for its own rows (the planner checks that the
 * statement's geo-partitioned tables are tied by key links; otherwise it uses `planGather`).
 */
export function planMerge(analysis: Analysis, schema: SchemaInfo): MergePlan {
  switch (analysis.kind) {
    case "insert":
      if (analysis.insert !== undefined) return refuseInsertValuesBroadcast();
      return scatterWrite(analysis, schema);
    case "update":
    case "delete":
    case "merge":
      return scatterWrite(analysis, schema);
    case "ddl":
      return { tier: "scatter-write", regionSql: analysis.text, movesRowData: false };
    case "explain":
      return refusePerRegionUtility("EXPLAIN");
    case "copy":
      return refusePerRegionUtility("COPY");
    case "select":
      return planSelect(analysis, schema);
    case "utility":
    case "session":
    case "transaction":
    case "console":
    case "empty":
      return refuseNotCombinable(analysis.command === "" ? analysis.kind : analysis.command);
    default:
      return assertNever(analysis.kind);
  }
}

/** A write sent as it is to every region: exact only if none of its sub-queries needs every region's rows. */
function scatterWrite(analysis: Analysis, schema: SchemaInfo): MergePlan {
  const tree = parseOne(analysis.text);
  if (tree !== undefined) {
    const why = nonRegionalBlock(new StatementWalker(schema).walkTop(tree), TOP_ONLY);
    if (why !== undefined) return refuseNonRegionalWrite(why);
  }
  return { tier: "scatter-write", regionSql: analysis.text, movesRowData: false };
}

const TOP_ONLY: ReadonlySet<number> = new Set([0]);

function assertNever(value: never): never {
  throw new TypeError(`unexpected ${String(value)}`);
}

function planSelect(analysis: Analysis, schema: SchemaInfo): MergePlan {
  if (analysis.flags.locking !== undefined) return refuseLockingAcrossRegions();
  if (analysis.flags.selectInto) return refuseSelectIntoAcrossRegions();
  if (analysis.flags.writingCte) return refuseWritingCteAcrossRegions();
  const perRegionState = analysis.flags.volatileFunctions.filter((f) => PER_REGION_STATE_FUNCTIONS.has(f));
  if (perRegionState.length > 0) return refuseVolatileAcrossRegions(perRegionState);
  const select = nodeAs(parseOne(analysis.text), "SelectStmt");
  if (select === undefined) return refuseNotCombinable(analysis.command);
  // Every relation's distribution first: rows that are the same in every region, or rows no rule
  // proves to be each region's own, are never pushed to the regions as they are.
  const walk = new StatementWalker(schema).walkTop({ SelectStmt: select });
  const verdict = distributionOf(select, walk);
  const violation = verdict.violations[0];
  if (violation !== undefined) return gatherOrRefuse(analysis, schema, describeViolation(violation));
  if ((select.op ?? "SETOP_NONE") !== "SETOP_NONE") {
    const arms = nonRegionalBlock(new StatementWalker(schema).walkTop({ SelectStmt: select }), TOP_ONLY);
    if (arms !== undefined) return gather(analysis, schema, arms);
    if (isUnionAllOnly(select) && (select.sortClause?.length ?? 0) === 0) {
      const plan = concat(select, analysis.text);
      if (plan !== undefined) return plan;
    }
    return gather(analysis, schema, "UNION, INTERSECT or EXCEPT");
  }
  if (select.valuesLists !== undefined && (select.fromClause?.length ?? 0) === 0) {
    return refuseNotCombinable("VALUES");
  }
  const nonRegional = nonRegionalBlock(new StatementWalker(schema).walkTop({ SelectStmt: select }), TOP_ONLY);
  if (nonRegional !== undefined) return gather(analysis, schema, nonRegional);
  const facts = topLevelFacts(select, schema);
  if (facts.volatileOncePerStatement.size > 0)
    return refuseVolatileAcrossRegions([...facts.volatileOncePerStatement].sort());
  if (facts.windows) return gather(analysis, schema, "a window function");
  const distinctOn = (select.distinctClause ?? []).some((d) => Object.keys(d).length > 0);
  if (distinctOn) return gather(analysis, schema, "DISTINCT ON");
  const plainDistinct = (select.distinctClause?.length ?? 0) > 0;
  const grouped =
    facts.aggregates ||
    plainDistinct ||
    (select.groupClause?.length ?? 0) > 0 ||
    select.havingClause !== undefined;
  if (grouped) {
    if (facts.subLinksBesideAggregates) return gather(analysis, schema, "a sub-query beside aggregates");
    const outcome = planPartialAggregate(select, schema, analysis.paramCount);
    return "plan" in outcome ? outcome.plan : gather(analysis, schema, outcome.gather);
  }
  if ((select.sortClause?.length ?? 0) > 0) {
    return (
      planOrdered(select, analysis.paramCount) ??
      gather(analysis, schema, "an ORDER BY the proxy cannot carry")
    );
  }
  return concat(select, analysis.text) ?? gather(analysis, schema, "a LIMIT that is an expression");
}

/**
 * Ships the rows home when the gather can rebuild the statement there; otherwise refuses with the
 * failed rule's own reason and hint (the gather's is about shipping, not about why it was needed).
 */
function gatherOrRefuse(
  analysis: Analysis,
  schema: SchemaInfo,
  rule: { readonly reason: string; readonly hint: string },
): GatherPlan | RefusedPlan {
  const plan = planGatherFor(analysis, schema, rule.reason);
  return plan.tier === "gather" ? plan : refuseNotRegional(rule.reason, rule.hint);
}

function gather(analysis: Analysis, schema: SchemaInfo, reason: string): GatherPlan | RefusedPlan {
  return planGatherFor(analysis, schema, reason);
}

/** The gather fallback for statements whose tables are not co-located. */
export function planGather(analysis: Analysis, schema: SchemaInfo): GatherPlan | RefusedPlan {
  return planGatherFor(analysis, schema, "tables joined other than on their shard key");
}
