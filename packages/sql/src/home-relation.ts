import type { TypeName as ColumnTypeName } from "./analysis.js";
import type { Node } from "./ast.js";
import {
  arrayOf,
  columnRef,
  funcCall,
  paramRef,
  resTarget,
  stringNode,
  typeCast,
  typeNameNode,
} from "./deparse.js";

export interface ShippedColumn {
  readonly name: string;
  readonly type: ColumnTypeName;
}

function isArrayTypeName(type: string): boolean {
  return type.trimEnd().endsWith("]");
}

/**
 * The relation the home region reads the regions' rows from: one typed array parameter per
 * column, zipped by `unnest`. A column whose own type is an array cannot travel inside an array
 * parameter (unnest would flatten it), so it is bound as `text[]` of each value's text form and
 * cast back.
 */
export function unnestRelation(columns: readonly ShippedColumn[], firstParam: number, alias: string): Node {
  const hasArrays = columns.some((c) => isArrayTypeName(c.type));
  const args = columns.map((c, i) =>
    typeCast(paramRef(firstParam + i), arrayOf(typeNameNode(isArrayTypeName(c.type) ? "text" : c.type))),
  );
  const unnest = funcCall("unnest", args);
  if (!hasArrays) {
    return {
      RangeFunction: {
        functions: [{ List: { items: [unnest, {} as Node] } }],
        alias: { aliasname: alias, colnames: columns.map((c) => stringNode(c.name)) },
      },
    };
  }
  const inner = "__geo_u";
  const targets = columns.map((c) =>
    isArrayTypeName(c.type)
      ? resTarget(typeCast(columnRef(inner, c.name), typeNameNode(c.type)), c.name)
      : resTarget(columnRef(inner, c.name)),
  );
  return {
    RangeSubselect: {
      subquery: {
        SelectStmt: {
          targetList: targets,
          fromClause: [
            {
              RangeFunction: {
                functions: [{ List: { items: [unnest, {} as Node] } }],
                alias: { aliasname: inner, colnames: columns.map((c) => stringNode(c.name)) },
              },
            },
          ],
          limitOption: "LIMIT_OPTION_DEFAULT",
          op: "SETOP_NONE",
        },
      },
      alias: { aliasname: alias },
    },
  } as Node;
}
