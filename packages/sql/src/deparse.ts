import { deparseSync } from "pgsql-deparser";
import type { Node, TypeName } from "./ast.js";
import { nodeAs } from "./ast.js";
import { parseOne } from "./parser.js";

/** Parse tree -> SQL text, on one line. Every rewrite of this package leaves through here. */
export function deparse(node: Node): string {
  return deparseSync(node, { pretty: false });
}

const typeNames = new Map<string, TypeName>();

/**
 * The parse tree of a type name as PostgreSQL prints it (format_type: `integer`,
 * `character varying(20)`, `timestamp with time zone`, `public."My T"`). Parsed by PostgreSQL's
 * own grammar rather than split by hand.
 */
export function typeNameNode(name: string): TypeName {
  let cached = typeNames.get(name);
  if (cached === undefined) {
    const select = nodeAs(parseOne(`SELECT NULL::${name}`), "SelectStmt");
    const cast = nodeAs(nodeAs(select?.targetList?.[0], "ResTarget")?.val, "TypeCast");
    if (cast?.typeName === undefined || (select?.targetList?.length ?? 0) !== 1) {
      throw new TypeError(`not a type name: ${name}`);
    }
    cached = cast.typeName;
    if (typeNames.size > 1024) typeNames.clear();
    typeNames.set(name, cached);
  }
  return structuredClone(cached);
}

export function arrayOf(typeName: TypeName): TypeName {
  return { ...typeName, arrayBounds: [...(typeName.arrayBounds ?? []), { Integer: { ival: -1 } }] };
}

export function columnRef(...names: string[]): Node {
  return { ColumnRef: { fields: names.map((sval) => ({ String: { sval } })) } };
}

export function stringNode(sval: string): Node {
  return { String: { sval } };
}

export function integerConst(value: number): Node {
  return value === 0 ? { A_Const: { ival: {} } } : { A_Const: { ival: { ival: value } } };
}

export function paramRef(number: number): Node {
  return { ParamRef: { number } };
}

export function funcCall(name: string, args: Node[], extra: Record<string, unknown> = {}): Node {
  return {
    FuncCall: { funcname: [stringNode(name)], args, funcformat: "COERCE_EXPLICIT_CALL", ...extra },
  } as Node;
}

export function typeCast(arg: Node, typeName: TypeName): Node {
  return { TypeCast: { arg, typeName } };
}

export function resTarget(val: Node, name?: string): Node {
  return { ResTarget: name === undefined ? { val } : { name, val } };
}
