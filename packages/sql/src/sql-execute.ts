import { type Node, nodeAs, tagOf, wrap } from "./ast.js";
import { deparse, RewriteMismatch } from "./deparse.js";
import { outputName } from "./output-names.js";
import { parseOne } from "./parser.js";

/** A parameter type of a prepared statement, as pg_type names it. */
export interface ParameterType {
  readonly schema: string;
  readonly name: string;
}

/** A statement an SQL-level PREPARE made: its text with `$n` and the types PostgreSQL gave `$n`. */
export interface SqlPrepared {
  readonly text: string;
  readonly types: readonly ParameterType[];
}

/**
 * What an `EXECUTE name(args)` of a prepared statement the proxy holds runs: the prepared
 * statement with each `$n` replaced by its argument as a constant of the parameter's type; or
 * why it cannot be written so (PostgreSQL's own arity error, or an argument that is not a
 * constant the proxy can type exactly).
 */
export type SqlExecuteBinding =
  | { readonly kind: "statement"; readonly sql: string }
  | { readonly kind: "arity"; readonly expected: number; readonly got: number }
  | { readonly kind: "argument"; readonly position: number; readonly type: string };

const NUMERIC_TYPES = new Set(["int2", "int4", "int8", "numeric", "float4", "float8"]);
const STRING_TYPES = new Set(["text", "varchar", "bpchar", "name"]);

/**
 * EXECUTE evaluates each argument and coerces it to its parameter's type as an assignment
 * would. The constants written here keep that meaning exactly:
 * - a quoted literal is an `unknown` constant: `'v'::T` runs T's input function, as the coercion does;
 * - NULL is `NULL::T`;
 * - a number goes through the same cast function as the assignment (`CAST(5.5 AS int4)` rounds
 *   as EXECUTE does) where PostgreSQL allows that cast in an assignment: to numbers and strings;
 * - TRUE/FALSE to bool or a string type likewise;
 * - a literal already cast to the parameter's own (pg_catalog) type is itself.
 * Anything else (an expression, another type's cast) could evaluate or coerce otherwise: refused.
 *
 * @example
 * bindSqlExecute(
 *   { text: "SELECT * FROM users WHERE tenant_id = $1", types: [{ schema: "pg_catalog", name: "text" }] },
 *   "EXECUTE p('alice')",
 * );
 * // { kind: "statement", sql: "SELECT * FROM users WHERE tenant_id = 'alice'::pg_catalog.text" }
 */
export function bindSqlExecute(prepared: SqlPrepared, executeText: string): SqlExecuteBinding {
  const args = nodeAs(parseOne(executeText), "ExecuteStmt")?.params ?? [];
  if (args.length !== prepared.types.length) {
    return { kind: "arity", expected: prepared.types.length, got: args.length };
  }
  const constants: Node[] = [];
  for (const [i, arg] of args.entries()) {
    const type = prepared.types[i]!;
    const constant = typedConstant(arg, type);
    if (constant === null) return { kind: "argument", position: i + 1, type: `${type.schema}.${type.name}` };
    constants.push(constant);
  }
  const tree = parseOne(prepared.text);
  if (tree === undefined) return { kind: "argument", position: 0, type: "" };
  try {
    return { kind: "statement", sql: deparse(substitute(tree, constants) as Node) };
  } catch (error) {
    if (error instanceof RewriteMismatch) return { kind: "argument", position: 0, type: "" };
    throw error;
  }
}

function typedConstant(arg: Node, type: ParameterType): Node | null {
  const catalog = type.schema === "pg_catalog";
  const constant = nodeAs(arg, "A_Const");
  if (constant !== undefined) {
    if (constant.isnull === true || constant.sval !== undefined) return castTo(arg, type);
    if (constant.ival !== undefined || constant.fval !== undefined) {
      return catalog && (NUMERIC_TYPES.has(type.name) || STRING_TYPES.has(type.name))
        ? castTo(arg, type)
        : null;
    }
    if (constant.boolval !== undefined) {
      return catalog && (type.name === "bool" || STRING_TYPES.has(type.name)) ? castTo(arg, type) : null;
    }
    return null;
  }
  const cast = nodeAs(arg, "TypeCast");
  if (cast === undefined || nodeAs(cast.arg, "A_Const") === undefined || !catalog) return null;
  const names = (cast.typeName?.names ?? []).map((n) => nodeAs(n, "String")?.sval);
  const plain =
    cast.typeName?.typmods === undefined &&
    cast.typeName?.arrayBounds === undefined &&
    cast.typeName?.setof !== true &&
    names[names.length - 1] === type.name &&
    (names.length === 1 || (names.length === 2 && names[0] === "pg_catalog"));
  return plain ? arg : null;
}

/** `CAST(arg AS schema.name)`: the qualified pg_type name, so no SQL keyword type (bit, character) adds a length. */
function castTo(arg: Node, type: ParameterType): Node {
  return wrap("TypeCast", {
    arg,
    typeName: {
      names: [wrap("String", { sval: type.schema }), wrap("String", { sval: type.name })],
      typemod: -1,
    },
  });
}

/**
 * The tree with every `$n` replaced. An unnamed output column whose name came from a `$n`
 * (`SELECT $1` is `?column?`, a cast of a constant would be named after its type) is given the
 * name PostgreSQL gave it, so the client sees the prepared statement's columns.
 */
function substitute(node: unknown, constants: readonly Node[]): unknown {
  if (Array.isArray(node)) return node.map((item) => substitute(item, constants));
  if (node === null || typeof node !== "object") return node;
  const record = node as Record<string, unknown>;
  const param = record["ParamRef"] as { number?: number } | undefined;
  if (param !== undefined && Object.keys(record).length === 1) {
    return constants[(param.number ?? 0) - 1] ?? node;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    out[key] =
      (key === "targetList" || key === "exprs") && Array.isArray(value)
        ? value.map((target) => renamedTarget(target as Node, constants))
        : substitute(value, constants);
  }
  return out;
}

function renamedTarget(target: Node, constants: readonly Node[]): unknown {
  const replaced = substitute(target, constants) as Node;
  const before = nodeAs(target, "ResTarget");
  const after = nodeAs(replaced, "ResTarget");
  if (
    before === undefined ||
    after === undefined ||
    before.name !== undefined ||
    tagOf(target) !== "ResTarget"
  ) {
    return replaced;
  }
  const name = outputName(before);
  return outputName(after) === name ? replaced : wrap("ResTarget", { ...after, name });
}
