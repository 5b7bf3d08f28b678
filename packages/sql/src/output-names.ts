import { lastName, type Node, nodeAs, stringValue, tagOf } from "./ast.js";

/**
 * The column name PostgreSQL gives an unnamed select-list item (its FigureColname rules), so a
 * rewritten statement keeps the names the client would have seen. Returns the name and how sure
 * the rule is (a cast only names a column when its operand says nothing better).
 */
function figure(node: Node | undefined): { name: string; strength: number } {
  if (node === undefined) return { name: "?column?", strength: 0 };
  switch (tagOf(node)) {
    case "ColumnRef": {
      const fields = nodeAs(node, "ColumnRef")?.fields ?? [];
      const name = stringValue(fields[fields.length - 1]);
      return name === undefined ? { name: "?column?", strength: 0 } : { name, strength: 2 };
    }
    case "A_Indirection": {
      const ind = nodeAs(node, "A_Indirection");
      const last = ind?.indirection?.[ind.indirection.length - 1];
      const name = stringValue(last);
      return name === undefined ? figure(ind?.arg) : { name, strength: 2 };
    }
    case "FuncCall":
      return { name: lastName(nodeAs(node, "FuncCall")?.funcname) ?? "?column?", strength: 2 };
    case "A_Expr": {
      const e = nodeAs(node, "A_Expr");
      return e?.kind === "AEXPR_NULLIF" ? { name: "nullif", strength: 2 } : { name: "?column?", strength: 0 };
    }
    case "TypeCast": {
      const cast = nodeAs(node, "TypeCast");
      const inner = figure(cast?.arg);
      if (inner.strength <= 1) {
        const typeName = lastName(cast?.typeName?.names);
        if (typeName !== undefined) return { name: typeName, strength: 1 };
      }
      return inner;
    }
    case "CollateClause":
      return figure(nodeAs(node, "CollateClause")?.arg);
    case "GroupingFunc":
      return { name: "grouping", strength: 2 };
    case "SubLink": {
      const link = nodeAs(node, "SubLink");
      switch (link?.subLinkType) {
        case "EXISTS_SUBLINK":
          return { name: "exists", strength: 2 };
        case "ARRAY_SUBLINK":
          return { name: "array", strength: 2 };
        case "EXPR_SUBLINK": {
          // PostgreSQL names it after the sub-query's first output column, whatever named that.
          let select = nodeAs(link.subselect, "SelectStmt");
          while (select !== undefined && select.op !== undefined && select.op !== "SETOP_NONE") {
            select = select.larg;
          }
          const first = nodeAs(select?.targetList?.[0], "ResTarget");
          if (first === undefined) return { name: "?column?", strength: 0 };
          return { name: outputName(first), strength: 2 };
        }
        default:
          return { name: "?column?", strength: 0 };
      }
    }
    case "CaseExpr": {
      const c = nodeAs(node, "CaseExpr");
      const inner = figure(c?.defresult);
      return inner.strength <= 1 ? { name: "case", strength: 1 } : inner;
    }
    case "A_ArrayExpr":
      return { name: "array", strength: 2 };
    case "RowExpr":
      return { name: "row", strength: 2 };
    case "CoalesceExpr":
      return { name: "coalesce", strength: 2 };
    case "MinMaxExpr":
      return { name: nodeAs(node, "MinMaxExpr")?.op === "IS_LEAST" ? "least" : "greatest", strength: 2 };
    case "SQLValueFunction":
      return { name: sqlValueFunctionName(nodeAs(node, "SQLValueFunction")?.op), strength: 2 };
    default:
      return { name: "?column?", strength: 0 };
  }
}

function sqlValueFunctionName(op: string | undefined): string {
  switch (op) {
    case "SVFOP_CURRENT_DATE":
      return "current_date";
    case "SVFOP_CURRENT_TIME":
    case "SVFOP_CURRENT_TIME_N":
      return "current_time";
    case "SVFOP_CURRENT_TIMESTAMP":
    case "SVFOP_CURRENT_TIMESTAMP_N":
      return "current_timestamp";
    case "SVFOP_LOCALTIME":
    case "SVFOP_LOCALTIME_N":
      return "localtime";
    case "SVFOP_LOCALTIMESTAMP":
    case "SVFOP_LOCALTIMESTAMP_N":
      return "localtimestamp";
    case "SVFOP_CURRENT_ROLE":
      return "current_role";
    case "SVFOP_CURRENT_USER":
      return "current_user";
    case "SVFOP_USER":
      return "user";
    case "SVFOP_SESSION_USER":
      return "session_user";
    case "SVFOP_CURRENT_CATALOG":
      return "current_catalog";
    case "SVFOP_CURRENT_SCHEMA":
      return "current_schema";
    default:
      return "?column?";
  }
}

/** The output name of a select-list item. */
export function outputName(target: { name?: string; val?: Node }): string {
  return target.name ?? figure(target.val).name;
}
