import { Deparser } from "pgsql-deparser";
import type { Node, SelectStmt, TypeName } from "./ast.js";
import { nodeAs } from "./ast.js";
import { parseOne } from "./parser.js";

type DeparserContext = Parameters<Deparser["SelectStmt"]>[1];
type DeparserSelect = Parameters<Deparser["SelectStmt"]>[0];

/**
 * pgsql-deparser prints every LIMIT as `LIMIT n`, dropping `WITH TIES` (the tree's limitOption):
 * a statement rebuilt from a tree that had `FETCH FIRST n ROWS WITH TIES` would cut the ties.
 * This printer writes such a clause in the SQL-standard form PostgreSQL reads back as WITH TIES.
 */
class GeoDeparser extends Deparser {
  override SelectStmt(node: DeparserSelect, context: DeparserContext): string {
    const select = node as unknown as SelectStmt;
    if (select.limitOption !== "LIMIT_OPTION_WITH_TIES" || select.limitCount === undefined)
      return super.SelectStmt(node, context);
    const rest = { ...select };
    delete rest.limitCount;
    delete rest.limitOffset;
    delete rest.lockingClause;
    rest.limitOption = "LIMIT_OPTION_DEFAULT";
    const parts = [super.SelectStmt(rest as unknown as DeparserSelect, context)];
    if (select.limitOffset !== undefined)
      parts.push(`OFFSET (${this.visit(select.limitOffset as never, context)}) ROWS`);
    parts.push(`FETCH FIRST (${this.visit(select.limitCount as never, context)}) ROWS WITH TIES`);
    for (const clause of select.lockingClause ?? []) parts.push(this.visit(clause as never, context));
    return parts.join(" ");
  }
}

/** Parse tree -> SQL text, on one line. Every rewrite of this package leaves through here. */
export function deparse(node: Node): string {
  return new GeoDeparser(node as never, { pretty: false }).deparseQuery();
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
