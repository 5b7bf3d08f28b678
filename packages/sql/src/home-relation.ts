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

/**
 * The built-in scalar types whose values travel in binary inside an array of their own type, as
 * `format_type` spells them (a length, precision or interval field list aside). Every other type
 * (arrays, composites and anonymous records, enums, domains, ranges, "char", types created by
 * users, whose OIDs differ from server to server) travels as its text form in a `text[]` and is cast
 * back to its exact name, typmod included, by the home statement. geoproxy's shipment applies the
 * same rule to the same name, so what it binds is what the statement reads.
 */
export const BINARY_SCALAR_NAMES: ReadonlySet<string> = new Set([
  "smallint",
  "integer",
  "bigint",
  "real",
  "double precision",
  "numeric",
  "boolean",
  "text",
  "character varying",
  "character",
  "bpchar",
  "name",
  "bytea",
  "date",
  "time without time zone",
  "time with time zone",
  "timestamp without time zone",
  "timestamp with time zone",
  "interval",
  "uuid",
  "json",
  "jsonb",
  "oid",
  "inet",
  "cidr",
  "macaddr",
  "macaddr8",
  "money",
  "bit",
  "pg_catalog.bit",
  "bit varying",
  // Other spellings of the same types (format_type never gives them; plans and tests may).
  "int",
  "int2",
  "int4",
  "int8",
  "float4",
  "float8",
  "bool",
  "varchar",
  "char",
  "timestamptz",
  "timestamp",
  "time",
  "timetz",
  "decimal",
]);

/** Does a shipped column of this type (as `format_type` names it) travel as text and get cast back? */
export function travelsAsText(type: string): boolean {
  const bare = type.replace(/\(\d+(?:,\s*\d+)?\)/g, "").trim();
  const base = bare.startsWith("interval") && !bare.includes("[") ? "interval" : bare;
  return !BINARY_SCALAR_NAMES.has(base);
}

/**
 * The relation the home region reads the regions' rows from: one typed array parameter per
 * column, zipped by `unnest`. A built-in scalar travels in binary in an array of its own type. Any
 * other column is bound as `text[]` of each value's text form and cast back to its exact type:
 * unnest would flatten an array, expand a composite into its fields, and some type names do not
 * survive an array suffix ("char").
 */
export function unnestRelation(columns: readonly ShippedColumn[], firstParam: number, alias: string): Node {
  const hasArrays = columns.some((c) => travelsAsText(c.type));
  const args = columns.map((c, i) =>
    typeCast(paramRef(firstParam + i), arrayOf(typeNameNode(travelsAsText(c.type) ? "text" : c.type))),
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
    travelsAsText(c.type)
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
