import type {
  Analysis,
  GatherPlan,
  GatherSource,
  RefusedPlan,
  SchemaInfo,
  ShippedRelation,
} from "./analysis.js";
import { cloneTree, type Node, nodeAs, type RangeVar, stringValue } from "./ast.js";
import { columnRef, deparse, resTarget } from "./deparse.js";
import { BUILTIN_AGGREGATES, VOLATILE_FUNCTIONS } from "./function-catalog.js";
import { unnestRelation } from "./home-relation.js";
import { parseOne } from "./parser.js";
import { refuseGatherUnsupported, refuseWriteGather } from "./refusals.js";
import {
  conjuncts,
  type Occurrence,
  type Scope,
  StatementWalker,
  type WalkResult,
} from "./statement-walker.js";

/** The column shipped for a table whose rows matter but none of whose columns are read (count(*)). */
export const ROW_MARKER_COLUMN = "__geo_row";

function walkOf(node: Node, schema: SchemaInfo): WalkResult {
  return new StatementWalker(schema).walkTop(node);
}

/** Does `expr` read only occurrence `o` (so it can be evaluated where o's rows are)? */
function readsOnly(expr: Node, o: number, occurrence: Occurrence, scope: Scope, schema: SchemaInfo): boolean {
  let ok = true;
  const visit = (value: unknown): void => {
    if (!ok || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const child = record[key];
      if (key === "SubLink") {
        ok = false;
        return;
      }
      if (key === "FuncCall") {
        const fn = child as { funcname?: Node[]; over?: unknown; agg_star?: boolean };
        const name = stringValue(fn.funcname?.[fn.funcname.length - 1])?.toLowerCase() ?? "";
        if (
          fn.over !== undefined ||
          BUILTIN_AGGREGATES.has(name) ||
          schema.aggregates?.has(name) === true ||
          VOLATILE_FUNCTIONS.has(name)
        ) {
          ok = false;
          return;
        }
      }
      if (key === "ColumnRef") {
        const fields = (child as { fields?: Node[] }).fields ?? [];
        if (fields.length === 1) {
          // Unqualified names are safe only in the statement's own single-table block.
          if (!(scope.parent === undefined && scope.occurrences.length === 1 && scope.otherFromItems === 0))
            ok = false;
        } else if (fields.length === 2) {
          if (stringValue(fields[0]) !== (occurrence.alias ?? occurrence.name)) ok = false;
          if (scope.names.get(stringValue(fields[0]) ?? "") !== o) ok = false;
        } else {
          ok = false;
        }
        return;
      }
      visit(child);
    }
  };
  visit(expr);
  return ok;
}

/** Filters of the statement that restrict occurrence `o` alone, to run in the regions. */
function pushedDownFilters(walk: WalkResult, o: number, schema: SchemaInfo): Node[] {
  const occurrence = walk.occurrences[o];
  if (occurrence === undefined || occurrence.nullable) return [];
  const out: Node[] = [];
  for (const p of walk.predicates) {
    if (
      !p.appliesTo.includes(o) ||
      (p.via !== "where" && p.via !== "join") ||
      p.scope.block !== occurrence.block
    )
      continue;
    for (const c of conjuncts(p.expr)) if (readsOnly(c, o, occurrence, p.scope, schema)) out.push(c);
  }
  return out;
}

function regionStatement(occurrence: Occurrence, filters: readonly Node[]): string {
  const columns = occurrence.columns;
  const targetList =
    columns === "all"
      ? [resTarget(columnRef(occurrence.alias ?? occurrence.name, "*") as Node)]
      : columns.size === 0
        ? [resTarget({ A_Const: { boolval: { boolval: true } } }, ROW_MARKER_COLUMN)]
        : [...columns].map((c) => resTarget(columnRef(occurrence.alias ?? occurrence.name, c)));
  if (columns === "all") {
    const star = nodeAs(targetList[0], "ResTarget")?.val;
    const fields = nodeAs(star, "ColumnRef")?.fields;
    if (fields !== undefined) fields[1] = { A_Star: {} };
  }
  const relation: RangeVar = {
    relname: occurrence.name,
    inh: !occurrence.only,
    relpersistence: "p",
    ...(occurrence.schema === undefined ? {} : { schemaname: occurrence.schema }),
    ...(occurrence.alias === undefined ? {} : { alias: { aliasname: occurrence.alias } }),
  };
  const where: Node | undefined =
    filters.length === 0
      ? undefined
      : filters.length === 1
        ? cloneTree(filters[0])
        : { BoolExpr: { boolop: "AND_EXPR", args: filters.map((f) => cloneTree(f)) } };
  return deparse({
    SelectStmt: {
      targetList,
      fromClause: [{ RangeVar: relation }],
      ...(where === undefined ? {} : { whereClause: where }),
      limitOption: "LIMIT_OPTION_DEFAULT",
      op: "SETOP_NONE",
    },
  });
}

/**
 * Tier 3: ship, from each region, the rows and columns each table contributes (its own filters
 * pushed down), and run the original statement in the home region over them.
 */
export function planGatherFor(
  analysis: Analysis,
  schema: SchemaInfo,
  reason: string,
): GatherPlan | RefusedPlan {
  if (analysis.kind !== "select") return refuseWriteGather();
  if (analysis.flags.locking !== undefined || analysis.flags.writingCte || analysis.flags.selectInto)
    return refuseWriteGather();
  const tree = parseOne(analysis.text);
  if (tree === undefined) return refuseGatherUnsupported("an empty statement");
  // Each table a sub-query reads is replaced by rows of its own: a sub-query written in GROUP BY
  // and again in the select list would no longer be one expression to PostgreSQL (the grand
  // total of a GROUPING SETS would keep its value, a correlated one would be "ungrouped").
  if (groupsBySubquery(tree)) return refuseGatherUnsupported("a sub-query in GROUP BY");
  // PostgreSQL before 18 nulls a constant of a grouping set in the groups that leave it out or
  // not, depending on the plan: over shipped rows the home region may answer otherwise.
  if (groupsSetsByConstant(tree))
    return refuseGatherUnsupported("a constant in GROUPING SETS, ROLLUP or CUBE");
  const walk = walkOf(tree, schema);
  const sources: GatherSource[] = [];
  for (const [i, o] of walk.occurrences.entries()) {
    if (o.fromNode === undefined)
      return refuseGatherUnsupported(`table ${o.name} (read outside a FROM list)`);
    sources.push({
      table: i,
      regionSql: regionStatement(o, pushedDownFilters(walk, i, schema)),
      columns: o.columns === "all" ? "all" : o.columns.size === 0 ? [ROW_MARKER_COLUMN] : [...o.columns],
    });
  }
  const firstParam = analysis.paramCount + 1;
  return {
    tier: "gather",
    sources,
    reason,
    firstParam,
    movesRowData: true,
    render(shipped: readonly ShippedRelation[]): string {
      const copy = cloneTree(tree);
      const copyWalk = walkOf(copy, schema);
      let next = firstParam;
      for (const relation of shipped) {
        const occurrence = copyWalk.occurrences[relation.table];
        const wrapper = occurrence?.fromNode as Record<string, unknown> | undefined;
        if (occurrence === undefined || wrapper === undefined)
          throw new RangeError(`no table ${relation.table} to replace`);
        const replacement = unnestRelation(
          relation.columns,
          next,
          occurrence.alias ?? occurrence.name,
        ) as unknown as Record<string, unknown>;
        next += relation.columns.length;
        for (const key of Object.keys(wrapper)) delete wrapper[key];
        Object.assign(wrapper, replacement);
      }
      return deparse(copy);
    },
  };
}

/** Whether any query block of `tree` has a sub-query in its GROUP BY. */
/** A GROUPING SETS, ROLLUP or CUBE item anywhere in the statement that reads no column. */
function groupsSetsByConstant(tree: unknown): boolean {
  if (tree === null || typeof tree !== "object") return false;
  if (Array.isArray(tree)) return tree.some(groupsSetsByConstant);
  for (const [key, value] of Object.entries(tree as Record<string, unknown>)) {
    if (key === "GroupingSet") {
      const items = (value as { content?: unknown[] }).content ?? [];
      const constant = (item: unknown): boolean =>
        nodeAs(item as Node, "GroupingSet") !== undefined
          ? false
          : nodeAs(item as Node, "RowExpr") !== undefined
            ? (nodeAs(item as Node, "RowExpr")?.args ?? []).some(constant)
            : !JSON.stringify(item).includes('"ColumnRef"');
      if (items.some(constant)) return true;
    }
    if (groupsSetsByConstant(value)) return true;
  }
  return false;
}

function groupsBySubquery(tree: unknown): boolean {
  if (tree === null || typeof tree !== "object") return false;
  if (Array.isArray(tree)) return tree.some(groupsBySubquery);
  for (const [key, value] of Object.entries(tree as Record<string, unknown>)) {
    if (key === "groupClause" && JSON.stringify(value).includes('"SubLink"')) return true;
    if (groupsBySubquery(value)) return true;
  }
  return false;
}
