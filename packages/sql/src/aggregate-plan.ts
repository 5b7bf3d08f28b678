import type { HomeFinish, PartialAggregatePlan, SchemaInfo, TypeName } from "./analysis.js";
import {
  cloneTree,
  containsNode,
  type FuncCall,
  lastName,
  type Node,
  nodeAs,
  type SelectStmt,
  sameTree,
  stringValue,
} from "./ast.js";
import { columnRef, deparse, funcCall, integerConst, resTarget, typeCast, typeNameNode } from "./deparse.js";
import { BUILTIN_AGGREGATES, DECOMPOSABLE_AGGREGATES } from "./function-catalog.js";
import { unnestRelation } from "./home-relation.js";
import { outputName } from "./output-names.js";

export const GROUP_COLUMN_PREFIX = "__geo_g";
export const DISTINCT_COLUMN_PREFIX = "__geo_d";
export const PARTIAL_COLUMN_PREFIX = "__geo_p";

/** Marks where a finish expression depends on a partial column's runtime type. */
const TYPED_MARK = "\u0000geo:";

export function isAggregateCall(fn: FuncCall, schema: SchemaInfo): boolean {
  if (fn.over !== undefined) return false;
  const name = lastName(fn.funcname)?.toLowerCase() ?? "";
  return (
    BUILTIN_AGGREGATES.has(name) ||
    schema.aggregates?.has(name) === true ||
    fn.agg_star === true ||
    fn.agg_distinct === true ||
    fn.agg_within_group === true ||
    fn.agg_filter !== undefined ||
    (fn.agg_order?.length ?? 0) > 0
  );
}

class NotDecomposable extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/**
 * Splits an aggregate query into what each region computes (partials grouped by the same keys)
 * and what the home region computes over them (the original select list, HAVING, ORDER BY and
 * LIMIT with every aggregate replaced by its combination of partials).
 */
class AggregateSplitter {
  readonly groupKeys: Node[];
  readonly distinctArgs: Node[] = [];
  readonly partials: Node[] = [];
  readonly partialKinds: string[] = [];
  readonly #schema: SchemaInfo;
  readonly #outputNames: Set<string>;

  constructor(groupKeys: Node[], schema: SchemaInfo, outputNames: Set<string>) {
    this.groupKeys = groupKeys;
    this.#schema = schema;
    this.#outputNames = outputNames;
  }

  #partial(expr: Node, kind: string): Node {
    const i = this.partials.length;
    this.partials.push(expr);
    this.partialKinds.push(kind);
    return columnRef(`${PARTIAL_COLUMN_PREFIX}${i}`);
  }

  /**
   * A statement aggregating without an aggregate (`SELECT 1 FROM t HAVING true`) still has one
   * group; each region ships a row count so the home finish has a column to read its rows from.
   */
  keepOneGroup(): void {
    if (this.groupKeys.length === 0 && this.distinctArgs.length === 0 && this.partials.length === 0)
      this.#partial(funcCall("count", [], { agg_star: true }), "count");
  }

  #distinctColumn(arg: Node): Node {
    let i = this.distinctArgs.findIndex((d) => sameTree(d, arg));
    if (i < 0) {
      i = this.distinctArgs.length;
      this.distinctArgs.push(arg);
    }
    return columnRef(`${DISTINCT_COLUMN_PREFIX}${i}`);
  }

  /** The home-region form of `expr`; throws NotDecomposable when there is none. */
  rewrite(expr: Node, allowOutputNames: boolean): Node {
    const key = this.groupKeys.findIndex((g) => sameTree(g, expr));
    if (key >= 0) {
      const column = columnRef(`${GROUP_COLUMN_PREFIX}${key}`);
      // The key reaches home without its collation: an explicit one is written again, so home
      // groups and orders it as the regions and one server would.
      const collate = nodeAs(expr, "CollateClause");
      return collate === undefined
        ? column
        : ({ CollateClause: { arg: column, collname: cloneTree(collate.collname) } } as Node);
    }
    const fn = nodeAs(expr, "FuncCall");
    if (fn !== undefined) {
      if (fn.over !== undefined) throw new NotDecomposable("a window function");
      if (isAggregateCall(fn, this.#schema)) return this.#rewriteAggregate(fn);
      if ((lastName(fn.funcname) ?? "").toLowerCase() === "grouping") throw new NotDecomposable("GROUPING()");
    }
    const ref = nodeAs(expr, "ColumnRef");
    if (ref !== undefined) {
      const name = ref.fields?.length === 1 ? stringValue(ref.fields[0]) : undefined;
      if (allowOutputNames && name !== undefined && this.#outputNames.has(name)) return cloneTree(expr);
      throw new NotDecomposable("a column that is neither grouped nor aggregated");
    }
    if (nodeAs(expr, "SubLink") !== undefined) throw new NotDecomposable("a sub-query beside aggregates");
    return this.#rewriteChildren(expr, allowOutputNames);
  }

  #rewriteChildren(node: Node, allowOutputNames: boolean): Node {
    const visit = (value: unknown): unknown => {
      if (value === null || typeof value !== "object") return value;
      if (Array.isArray(value)) return value.map((v) => visitNode(v));
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = visitNode(v);
      return out;
    };
    const visitNode = (value: unknown): unknown => {
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        const keys = Object.keys(value);
        if (keys.length === 1 && isExpressionTag(keys[0] ?? ""))
          return this.rewrite(value as Node, allowOutputNames);
      }
      return visit(value);
    };
    const [tag] = Object.keys(node);
    if (tag === undefined) return node;
    return { [tag]: visit((node as unknown as Record<string, unknown>)[tag]) } as unknown as Node;
  }

  #rewriteAggregate(fn: FuncCall): Node {
    const name = (lastName(fn.funcname) ?? "").toLowerCase();
    if (!DECOMPOSABLE_AGGREGATES.has(name) || this.#schema.aggregates?.has(name) === true) {
      throw new NotDecomposable(`the aggregate ${name}()`);
    }
    if (fn.agg_within_group === true || (fn.agg_order?.length ?? 0) > 0)
      throw new NotDecomposable(`${name}() with an ORDER BY`);
    const args = fn.args ?? [];
    if (fn.agg_star !== true && args.length !== 1)
      throw new NotDecomposable(`${name}() with ${args.length} arguments`);
    const arg = args[0];
    const distinct = fn.agg_distinct === true && name !== "min" && name !== "max";
    if (distinct) {
      if (fn.agg_filter !== undefined) throw new NotDecomposable(`${name}(DISTINCT ...) FILTER`);
      if (arg === undefined || nodeAs(arg, "RowExpr") !== undefined)
        throw new NotDecomposable(`${name}(DISTINCT) of a row`);
      // The regions ship each group's distinct values; the home region runs the aggregate itself,
      // in the argument's explicit collation (a nondeterministic one makes values equal).
      const column = this.#distinctColumn(cloneTree(arg));
      const collate = nodeAs(arg, "CollateClause");
      if (collate === undefined && containsNode(arg, (tag) => tag === "CollateClause"))
        throw new NotDecomposable(`${name}(DISTINCT ...) of an expression with a COLLATE inside`);
      const homeArg =
        collate === undefined
          ? column
          : ({ CollateClause: { arg: column, collname: cloneTree(collate.collname) } } as Node);
      return funcCall(name, [homeArg], { agg_distinct: true });
    }
    const regional = (fnName: string): Node =>
      funcCall(fnName, arg === undefined ? [] : [cloneTree(arg)], {
        ...(fn.agg_star === true ? { agg_star: true } : {}),
        ...(fn.agg_filter === undefined ? {} : { agg_filter: cloneTree(fn.agg_filter) }),
      });
    switch (name) {
      case "count": {
        const p = this.#partial(regional("count"), "count");
        return typeCast(
          { CoalesceExpr: { args: [funcCall("sum", [p]), integerConst(0)] } },
          typeNameNode("int8"),
        );
      }
      case "sum": {
        const p = this.#partial(regional("sum"), "sum");
        return typedMark("sum", [p]);
      }
      case "min":
      case "max": {
        const partial = this.#partial(regional(name), name);
        // The partials reach home without their collation: an explicit one is written again
        // around them, so home compares as each region did. One deeper in the argument is not
        // known at home (the partials' type has none of its own).
        const collate = arg === undefined ? undefined : nodeAs(arg, "CollateClause");
        if (collate !== undefined)
          return funcCall(name, [
            { CollateClause: { arg: partial, collname: cloneTree(collate.collname) } } as Node,
          ]);
        if (arg !== undefined && containsNode(arg, (tag) => tag === "CollateClause"))
          throw new NotDecomposable(`${name}() of an expression with a COLLATE inside`);
        return funcCall(name, [partial]);
      }
      case "bool_and":
      case "every":
        return funcCall("bool_and", [this.#partial(regional(name), name)]);
      case "bool_or":
        return funcCall("bool_or", [this.#partial(regional(name), name)]);
      case "avg": {
        const s = this.#partial(regional("sum"), "avg-sum");
        const c = this.#partial(regional("count"), "avg-count");
        // avg(real) adds in double precision, sum(real) in real: a region's sum(real) would lose
        // digits one server keeps. The regions also add `arg * 1::float8` (exact for every avg
        // argument type, an interval stays an interval), used when the sum turns out to be real.
        const wide = this.#partial(
          funcCall("sum", [multiplyByFloat8One(cloneTree(arg as Node))], {
            ...(fn.agg_filter === undefined ? {} : { agg_filter: cloneTree(fn.agg_filter) }),
          }),
          "avg-float8-sum",
        );
        return typedMark("avg", [s, c, wide]);
      }
      default:
        throw new NotDecomposable(`the aggregate ${name}()`);
    }
  }
}

const EXPRESSION_TAGS: ReadonlySet<string> = new Set([
  "ColumnRef",
  "FuncCall",
  "A_Expr",
  "BoolExpr",
  "CaseExpr",
  "CaseWhen",
  "TypeCast",
  "CoalesceExpr",
  "NullTest",
  "BooleanTest",
  "MinMaxExpr",
  "NullIfExpr",
  "SubLink",
  "A_Indirection",
  "CollateClause",
  "RowExpr",
  "A_ArrayExpr",
]);

function isExpressionTag(tag: string): boolean {
  return EXPRESSION_TAGS.has(tag);
}

/** `arg * 1::float8`: the argument in double precision (an interval stays an interval). */
/**
 * `CASE WHEN pg_typeof(arg) = 'real'::regtype THEN arg * 1::float8 END`: the double-precision sum
 * only where the argument is real. For any other type the branch never runs, so a numeric beyond
 * float8's range cannot overflow there (the product would, where one server's avg does not).
 */
function multiplyByFloat8One(arg: Node): Node {
  const isReal: Node = {
    A_Expr: {
      kind: "AEXPR_OP",
      name: [{ String: { sval: "=" } }],
      lexpr: funcCall("pg_typeof", [cloneTree(arg)]),
      rexpr: typeCast({ A_Const: { sval: { sval: "real" } } } as Node, typeNameNode("regtype")),
    },
  };
  const wide: Node = {
    A_Expr: {
      kind: "AEXPR_OP",
      name: [{ String: { sval: "*" } }],
      lexpr: arg,
      rexpr: typeCast(integerConst(1), typeNameNode("float8")),
    },
  };
  return { CaseExpr: { args: [{ CaseWhen: { expr: isReal, result: wide } }] } } as Node;
}

function typedMark(kind: "sum" | "avg", columns: Node[]): Node {
  const names = columns.map((c) => stringValue(nodeAs(c, "ColumnRef")?.fields?.[0]) ?? "");
  return columnRef(`${TYPED_MARK}${kind}`, ...names);
}

const INTEGER_SUM_TYPES = new Set(["bigint", "int8", "numeric"]);
const FLOAT_TYPES = new Set(["real", "float4", "double precision", "float8"]);

function baseType(type: string): string {
  return type
    .replace(/\(.*\)$/, "")
    .trim()
    .toLowerCase();
}

/** Replaces type-dependent marks now that the partial columns' types are known. */
function resolveMarks(node: unknown, typeOf: (column: string) => string): unknown {
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((n) => resolveMarks(n, typeOf));
  const record = node as Record<string, unknown>;
  const ref = record["ColumnRef"] as { fields?: Node[] } | undefined;
  const first = stringValue(ref?.fields?.[0]);
  if (first?.startsWith(TYPED_MARK) === true) {
    const kind = first.slice(TYPED_MARK.length);
    const columns = (ref?.fields ?? []).slice(1).map((f) => stringValue(f) ?? "");
    const [a = "", b = "", wide = ""] = columns;
    if (kind === "sum") {
      // sum over per-region sums keeps the type one server's sum would have had (int4 sums are int8, ...).
      return typeCast(funcCall("sum", [columnRef(a)]), typeNameNode(typeOf(a)));
    }
    const sumType = baseType(typeOf(a));
    const count: Node = {
      A_Expr: {
        kind: "AEXPR_NULLIF",
        name: [{ String: { sval: "=" } }],
        lexpr: funcCall("sum", [columnRef(b)]),
        rexpr: integerConst(0),
      },
    };
    if (INTEGER_SUM_TYPES.has(sumType)) {
      // avg over integers and numeric is numeric division of the exact sum by the count, as in one server.
      return {
        A_Expr: {
          kind: "AEXPR_OP",
          name: [{ String: { sval: "/" } }],
          lexpr: funcCall("sum", [columnRef(a)]),
          rexpr: count,
        },
      };
    }
    const floatSum =
      sumType === "real" || sumType === "float4"
        ? funcCall("sum", [columnRef(wide)])
        : FLOAT_TYPES.has(sumType)
          ? funcCall("sum", [typeCast(columnRef(a), typeNameNode("float8"))])
          : funcCall("sum", [columnRef(a)]);
    return {
      A_Expr: {
        kind: "AEXPR_OP",
        name: [{ String: { sval: "/" } }],
        lexpr: floatSum,
        rexpr: typeCast(count, typeNameNode("float8")),
      },
    };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = resolveMarks(v, typeOf);
  return out;
}

export type AggregateOutcome = { readonly plan: PartialAggregatePlan } | { readonly gather: string };

/** Group keys of a statement, with ordinals and output names resolved to expressions. */
function groupKeysOf(select: SelectStmt): Node[] | string {
  const targets = (select.targetList ?? []).map((t) => nodeAs(t, "ResTarget"));
  const outputs = new Map<string, Node>();
  for (const t of targets) if (t?.name !== undefined && t.val !== undefined) outputs.set(t.name, t.val);
  const keys: Node[] = [];
  for (const item of select.groupClause ?? []) {
    if (nodeAs(item, "GroupingSet") !== undefined) return "GROUPING SETS, ROLLUP or CUBE";
    const ordinal = nodeAs(item, "A_Const")?.ival;
    if (ordinal !== undefined) {
      const target = targets[(ordinal.ival ?? 0) - 1]?.val;
      if (target === undefined) return "a GROUP BY position outside the select list";
      keys.push(target);
      continue;
    }
    const ref = nodeAs(item, "ColumnRef");
    const name = ref?.fields?.length === 1 ? stringValue(ref.fields[0]) : undefined;
    const aliased = name === undefined ? undefined : outputs.get(name);
    // GROUP BY prefers an input column over an output name; unable to tell them apart, refuse to guess.
    if (aliased !== undefined && !sameTree(aliased, item))
      return "GROUP BY a name that is also an output alias";
    keys.push(item);
  }
  return keys;
}

/**
 * Tier 2: partial aggregates per region, finished by PostgreSQL in the home region. Returns why
 * not when the statement needs rows instead (tier 3).
 */
export function planPartialAggregate(
  select: SelectStmt,
  schema: SchemaInfo,
  statementParams: number,
): AggregateOutcome {
  if (select.groupDistinct === true) return { gather: "GROUP BY DISTINCT" };
  if ((select.windowClause?.length ?? 0) > 0) return { gather: "a window clause" };
  const plainDistinct = (select.distinctClause?.length ?? 0) > 0;
  const targets = (select.targetList ?? []).map((t) => nodeAs(t, "ResTarget"));
  if (targets.some((t) => t?.val === undefined || isStarRef(t.val)))
    return { gather: "SELECT * with aggregates or DISTINCT" };
  let groupKeys: Node[];
  if (plainDistinct) {
    if ((select.groupClause?.length ?? 0) > 0 || select.havingClause !== undefined)
      return { gather: "DISTINCT with GROUP BY" };
    groupKeys = targets.map((t) => t?.val as Node);
    // DISTINCT of an aggregate groups nothing (one row); a region could not GROUP BY it.
    if (
      groupKeys.some((key) =>
        containsNode(key, (tag, body) => tag === "FuncCall" && isAggregateCall(body as FuncCall, schema)),
      )
    )
      return { gather: "DISTINCT over an aggregate" };
  } else {
    const keys = groupKeysOf(select);
    if (typeof keys === "string") return { gather: keys };
    groupKeys = keys;
  }
  // A correlated sub-query as a key would have to be grouped by where its outer columns are.
  if (groupKeys.some((key) => containsNode(key, (tag) => tag === "SubLink")))
    return { gather: "a sub-query in GROUP BY or DISTINCT" };
  const outputNames = new Set(targets.map((t) => t?.name).filter((n) => n !== undefined));
  const splitter = new AggregateSplitter(groupKeys, schema, outputNames);
  let finishTargets: Node[];
  let having: Node | undefined;
  let sortClause: Node[] | undefined;
  try {
    finishTargets = targets.map((t) =>
      resTarget(splitter.rewrite(t?.val as Node, false), outputName(t ?? {})),
    );
    having = select.havingClause === undefined ? undefined : splitter.rewrite(select.havingClause, false);
    sortClause = select.sortClause?.map((s) => {
      const sortBy = nodeAs(s, "SortBy");
      if (sortBy?.node === undefined || (sortBy.useOp?.length ?? 0) > 0)
        throw new NotDecomposable("ORDER BY USING");
      const ordinal = nodeAs(sortBy.node, "A_Const")?.ival !== undefined;
      return {
        SortBy: { ...sortBy, node: ordinal ? cloneTree(sortBy.node) : splitter.rewrite(sortBy.node, true) },
      } as Node;
    });
  } catch (error) {
    if (error instanceof NotDecomposable) return { gather: error.why };
    throw error;
  }
  splitter.keepOneGroup();
  const groupNames = groupKeys.map((_, i) => `${GROUP_COLUMN_PREFIX}${i}`);
  const distinctNames = splitter.distinctArgs.map((_, i) => `${DISTINCT_COLUMN_PREFIX}${i}`);
  const partialNames = splitter.partials.map((_, i) => `${PARTIAL_COLUMN_PREFIX}${i}`);
  const regionGroupBy = [...groupKeys, ...splitter.distinctArgs].map((g) => cloneTree(g));
  const region: SelectStmt = {
    ...(select.withClause === undefined ? {} : { withClause: select.withClause }),
    targetList: [
      ...groupKeys.map((g, i) => resTarget(cloneTree(g), groupNames[i])),
      ...splitter.distinctArgs.map((d, i) => resTarget(cloneTree(d), distinctNames[i])),
      ...splitter.partials.map((p, i) => resTarget(p, partialNames[i])),
    ],
    ...(select.fromClause === undefined ? {} : { fromClause: select.fromClause }),
    ...(select.whereClause === undefined ? {} : { whereClause: select.whereClause }),
    // A constant key ('x', or an integer GROUP BY would read as a position) goes by its
    // position: the keys lead the select list.
    ...(regionGroupBy.length === 0
      ? {}
      : {
          groupClause: regionGroupBy.map((key, i) =>
            nodeAs(key, "A_Const") === undefined ? key : integerConst(i + 1),
          ),
        }),
    limitOption: "LIMIT_OPTION_DEFAULT",
    op: "SETOP_NONE",
  };
  const columns = [...groupNames, ...distinctNames, ...partialNames];
  const finishTemplate: SelectStmt = {
    targetList: finishTargets,
    ...(groupNames.length === 0
      ? {}
      : {
          groupClause: groupNames.map((n, i) => {
            const collate = nodeAs(groupKeys[i], "CollateClause");
            return collate === undefined
              ? columnRef(n)
              : ({ CollateClause: { arg: columnRef(n), collname: cloneTree(collate.collname) } } as Node);
          }),
        }),
    ...(having === undefined ? {} : { havingClause: having }),
    ...(sortClause === undefined ? {} : { sortClause }),
    ...(select.limitCount === undefined ? {} : { limitCount: select.limitCount }),
    ...(select.limitOffset === undefined ? {} : { limitOffset: select.limitOffset }),
    limitOption: select.limitOption ?? "LIMIT_OPTION_DEFAULT",
    op: "SETOP_NONE",
  };
  const homeFinish: HomeFinish = {
    columns,
    firstParam: statementParams + 1,
    render(types: readonly TypeName[]): string {
      if (types.length !== columns.length)
        throw new RangeError(`expected ${columns.length} column types, got ${types.length}`);
      const typeOf = (column: string): string => types[columns.indexOf(column)] ?? "numeric";
      const finish = resolveMarks(cloneTree(finishTemplate), typeOf) as SelectStmt;
      finish.fromClause = [
        unnestRelation(
          columns.map((name, i) => ({ name, type: types[i] ?? "text" })),
          statementParams + 1,
          "__geo_p",
        ),
      ];
      return deparse({ SelectStmt: finish });
    },
  };
  return {
    plan: {
      tier: "partial-aggregate",
      regionSql: deparse({ SelectStmt: region }),
      homeFinish,
      partials: splitter.partialKinds,
      movesRowData: splitter.distinctArgs.length > 0,
    },
  };
}

function isStarRef(node: Node): boolean {
  const fields = nodeAs(node, "ColumnRef")?.fields ?? [];
  return fields.length > 0 && nodeAs(fields[fields.length - 1], "A_Star") !== undefined;
}
