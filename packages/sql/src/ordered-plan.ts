import type { HomeFinish, OrderedPlan, PartialAggregatePlan, SortKey, TypeName } from "./analysis.js";
import {
  cloneTree,
  containsNode,
  lastName,
  type Node,
  nodeAs,
  type SelectStmt,
  type SortBy,
  stringValue,
} from "./ast.js";
import { columnRef, deparse, resTarget } from "./deparse.js";
import { unnestRelation } from "./home-relation.js";
import { regionLimit, withRegionLimit } from "./limit-rewrite.js";

export const SORT_COLUMN_PREFIX = "__geo_sort_";

/** The expression an ORDER BY item sorts by: ordinals and output names resolved to the select list. */
function sortExpression(item: SortBy, select: SelectStmt): Node | undefined {
  const node = item.node;
  if (node === undefined) return undefined;
  const targets = (select.targetList ?? []).map((t) => nodeAs(t, "ResTarget"));
  const ordinal = nodeAs(node, "A_Const")?.ival;
  if (ordinal !== undefined) {
    const target = targets[(ordinal.ival ?? 0) - 1];
    if (target?.val === undefined || isStar(target.val)) return undefined;
    return target.val;
  }
  const ref = nodeAs(node, "ColumnRef");
  if (ref !== undefined && ref.fields?.length === 1) {
    const name = stringValue(ref.fields[0]);
    const named = targets.find((t) => t?.name !== undefined && t.name === name);
    if (named?.val !== undefined) return named.val;
  }
  return node;
}

function isStar(node: Node): boolean {
  const fields = nodeAs(node, "ColumnRef")?.fields ?? [];
  return fields.length > 0 && nodeAs(fields[fields.length - 1], "A_Star") !== undefined;
}

/**
 * Tier 1 with an order: each region sorts and cuts its own top count+offset rows, the sort keys
 * added as hidden trailing columns; the proxy merges them (exact types only) or the home region
 * re-sorts them. Undefined when the ORDER BY cannot be carried in hidden columns. With
 * `FETCH FIRST n ROWS WITH TIES` the home region always finishes (tier `partial-aggregate`, with no
 * partials: the rows themselves travel).
 */
export function planOrdered(
  select: SelectStmt,
  statementParams: number,
): OrderedPlan | PartialAggregatePlan | undefined {
  const limit = regionLimit(select);
  if (limit === "unsupported") return undefined;
  const sortBys = (select.sortClause ?? []).map((s) => nodeAs(s, "SortBy"));
  const hidden: Node[] = [];
  const keys: SortKey[] = [];
  const count = sortBys.length;
  for (const [i, sortBy] of sortBys.entries()) {
    if (sortBy === undefined || (sortBy.useOp?.length ?? 0) > 0 || sortBy.sortby_dir === "SORTBY_USING")
      return undefined;
    const expr = sortExpression(sortBy, select);
    if (expr === undefined) return undefined;
    const column = `${SORT_COLUMN_PREFIX}${i}`;
    hidden.push(resTarget(cloneTree(expr), column));
    const descending = sortBy.sortby_dir === "SORTBY_DESC";
    const nullsFirst =
      sortBy.sortby_nulls === "SORTBY_NULLS_FIRST"
        ? true
        : sortBy.sortby_nulls === "SORTBY_NULLS_LAST"
          ? false
          : descending;
    const collate = nodeAs(expr, "CollateClause");
    // A COLLATE inside the key (`upper(x COLLATE "C")`, a sub-query's `max(x COLLATE "C")`)
    // gives the key its collation, which a shipped column cast home does not carry: not merged.
    if (containsNode(collate === undefined ? expr : collate.arg, (tag) => tag === "CollateClause")) {
      return undefined;
    }
    const collation = lastName(collate?.collname);
    keys.push({
      column,
      fromEnd: count - 1 - i,
      descending,
      nullsFirst,
      ...(collation === undefined ? {} : { collation }),
    });
  }
  const region = withRegionLimit({ ...select, targetList: [...(select.targetList ?? []), ...hidden] }, limit);
  // Each region keeps its first count+offset rows and every row tied with the last of them: a
  // row of one server's answer has fewer than count+offset rows sorting strictly before it, so
  // it is among its own region's. The home finish then applies OFFSET and WITH TIES once.
  if (select.limitOption === "LIMIT_OPTION_WITH_TIES" && region.limitCount !== undefined)
    region.limitOption = "LIMIT_OPTION_WITH_TIES";
  const finishLimit = {
    limitCount: select.limitCount,
    limitOffset: select.limitOffset,
    limitOption: select.limitOption,
  };
  const homeFinish: HomeFinish = {
    columns: [],
    firstParam: statementParams + 1,
    render(types: readonly TypeName[], names?: readonly string[]): string {
      const visible = types.length - count;
      if (visible < 0) throw new RangeError("fewer columns than sort keys");
      const columns = types.map((type, i) => ({
        name: i < visible ? `c${i}` : `${SORT_COLUMN_PREFIX}${i - visible}`,
        type,
      }));
      const targets = columns
        .slice(0, visible)
        .map((c, i) => resTarget(columnRef(c.name), names?.[i] ?? c.name));
      const sortClause = keys.map((k) => ({
        SortBy: {
          node:
            k.collation === undefined
              ? columnRef(k.column)
              : {
                  CollateClause: { arg: columnRef(k.column), collname: [{ String: { sval: k.collation } }] },
                },
          sortby_dir: k.descending ? "SORTBY_DESC" : "SORTBY_ASC",
          sortby_nulls: k.nullsFirst ? "SORTBY_NULLS_FIRST" : "SORTBY_NULLS_LAST",
        },
      })) as Node[];
      const finish: SelectStmt = {
        targetList: targets,
        fromClause: [unnestRelation(columns, statementParams + 1, "__geo_r")],
        sortClause,
        op: "SETOP_NONE",
        limitOption: finishLimit.limitOption ?? "LIMIT_OPTION_DEFAULT",
        ...(finishLimit.limitCount === undefined ? {} : { limitCount: cloneTree(finishLimit.limitCount) }),
        ...(finishLimit.limitOffset === undefined ? {} : { limitOffset: cloneTree(finishLimit.limitOffset) }),
      };
      return deparse({ SelectStmt: finish });
    },
  };
  if (select.limitOption === "LIMIT_OPTION_WITH_TIES") {
    // Ties cannot be cut by counting merged rows: PostgreSQL finishes them in the home region,
    // over the regions' rows, as it finishes partials.
    return {
      tier: "partial-aggregate",
      regionSql: deparse({ SelectStmt: region }),
      homeFinish,
      partials: [],
      movesRowData: true,
    };
  }
  return {
    tier: "ordered",
    regionSql: deparse({ SelectStmt: region }),
    sortKeys: keys,
    hiddenColumns: count,
    limit: limit.spec,
    homeFinish,
    movesRowData: true,
  };
}
