import { Deparser } from "pgsql-deparser";
import type { Node, SelectStmt, TypeCast, TypeName } from "./ast.js";
import { nodeAs } from "./ast.js";
import { parseOne } from "./parser.js";

type DeparserContext = Parameters<Deparser["SelectStmt"]>[1];
type DeparserNode<K extends "NullTest" | "BooleanTest" | "TypeName" | "TypeCast"> = Parameters<
  Deparser[K]
>[0];

/** Operands that print as one token or a closed form (a call, a cast, a parenthesised list). */
const SIMPLE_OPERANDS = new Set([
  "ColumnRef",
  "A_Const",
  "ParamRef",
  "FuncCall",
  "TypeCast",
  "RowExpr",
  "CoalesceExpr",
  "CaseExpr",
]);
type DeparserSelect = Parameters<Deparser["SelectStmt"]>[0];

/**
 * pgsql-deparser prints every LIMIT as `LIMIT n`, dropping `WITH TIES` (the tree's limitOption):
 * a statement rebuilt from a tree that had `FETCH FIRST n ROWS WITH TIES` would cut the ties.
 * This printer writes such a clause in the SQL-standard form PostgreSQL reads back as WITH TIES.
 */
class GeoDeparser extends Deparser {
  /**
   * pgsql-deparser prints the argument of IS [NOT] NULL and IS [NOT] TRUE/FALSE/UNKNOWN bare:
   * `(NOT p) IS NULL` came out as `NOT p IS NULL`, which PostgreSQL reads as `NOT (p IS NULL)`.
   * Any argument but a simple operand is parenthesised here.
   */
  override NullTest(node: DeparserNode<"NullTest">, context: DeparserContext): string {
    const test =
      (node as { nulltesttype?: string }).nulltesttype === "IS_NOT_NULL" ? "IS NOT NULL" : "IS NULL";
    return `${this.operand((node as { arg?: Node }).arg, context)} ${test}`;
  }

  override BooleanTest(node: DeparserNode<"BooleanTest">, context: DeparserContext): string {
    const kind = (node as { booltesttype?: string }).booltesttype ?? "IS_TRUE";
    return `${this.operand((node as { arg?: Node }).arg, context)} ${kind.replace(/_/g, " ")}`;
  }

  private operand(arg: Node | undefined, context: DeparserContext): string {
    const text = this.visit(arg as never, context);
    if (arg === undefined) return text;
    const tag = Object.keys(arg)[0];
    return SIMPLE_OPERANDS.has(tag ?? "") ? text : `(${text})`;
  }

  /**
   * pgsql-deparser prints some pg_catalog types bare (`pg_catalog.text` as `text`, `pg_catalog.bit`
   * as `bit`, which PostgreSQL reads as bit(1)), in a cast always. A plain pg_catalog name whose
   * printed form does not read back as itself is printed qualified and quoted, which always does.
   */
  override TypeName(node: DeparserNode<"TypeName">, context: DeparserContext): string {
    const text = super.TypeName(node, context);
    const name = plainCatalogName(node as unknown as TypeName);
    return name === undefined || readsBackAsCatalogType(text, name) ? text : qualified(name);
  }

  override TypeCast(node: DeparserNode<"TypeCast">, context: DeparserContext): string {
    const cast = node as unknown as TypeCast;
    const name = cast.typeName === undefined ? undefined : plainCatalogName(cast.typeName);
    const text = super.TypeCast(node, context);
    if (name === undefined || text.startsWith("CAST(")) return text;
    // The `arg::type` form, with the type as the base printed it (its `pg_catalog.` dropped).
    if (readsBackAsCatalogType(text.slice(text.lastIndexOf("::") + 2), name)) return text;
    return `CAST(${this.visit(cast.arg as never, context)} AS ${qualified(name)})`;
  }

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

const readBack = new Map<string, boolean>();

/** Whether `text` as a type name is read as `pg_catalog.<name>` with no type modifier. */
function readsBackAsCatalogType(text: string, name: string): boolean {
  const key = `${text}\u0000${name}`;
  let same = readBack.get(key);
  if (same === undefined) {
    const cast = nodeAs(
      nodeAs(nodeAs(parseOne(`SELECT NULL::${text}`), "SelectStmt")?.targetList?.[0], "ResTarget")?.val,
      "TypeCast",
    );
    const names = (cast?.typeName?.names ?? []).map((n) => nodeAs(n, "String")?.sval);
    same =
      names.length === 2 &&
      names[0] === "pg_catalog" &&
      names[1] === name &&
      cast?.typeName?.typmods === undefined &&
      cast?.typeName?.arrayBounds === undefined;
    readBack.set(key, same);
  }
  return same;
}

/** `X` of a type name written `pg_catalog.X` with no modifier, bounds or SETOF. */
function plainCatalogName(type: TypeName): string | undefined {
  const names = (type.names ?? []).map((name) => nodeAs(name, "String")?.sval);
  if (names.length !== 2 || names[0] !== "pg_catalog") return undefined;
  if (type.typmods !== undefined || type.arrayBounds !== undefined || type.setof === true) return undefined;
  if (type.pct_type === true) return undefined;
  return names[1];
}

function qualified(name: string): string {
  return `pg_catalog."${name.replace(/"/g, '""')}"`;
}

/**
 * Parse tree -> SQL text, on one line. Every rewrite of this package leaves through here, and
 * is read back: a text that PostgreSQL's grammar parses into another tree (a printer that drops
 * parentheses, `(NOT p) IS NULL` printed as `NOT p IS NULL`, or `"char"[]` as `"char"`) would
 * run another statement than the one planned. Throws RewriteMismatch then.
 */
export function deparse(node: Node): string {
  const text = new GeoDeparser(node as never, { pretty: false }).deparseQuery();
  const reread = parseOne(text);
  if (reread === undefined || !sameTree(node, reread)) throw new RewriteMismatch(text);
  return text;
}

/** A rewritten statement whose text does not read back as the tree it was printed from. */
export class RewriteMismatch extends Error {
  constructor(readonly text: string) {
    super(`a rewritten statement does not read back as written: ${text}`);
    this.name = "RewriteMismatch";
  }
}

/**
 * Fields the grammar fills in with their default whatever the text says, or that say only where
 * the text was: a tree built by a rewrite may leave them out.
 */
const DEFAULT_FIELDS: Readonly<Record<string, unknown>> = {
  limitOption: "LIMIT_OPTION_DEFAULT",
  op: "SETOP_NONE",
  sortby_dir: "SORTBY_DEFAULT",
  sortby_nulls: "SORTBY_NULLS_DEFAULT",
  funcformat: "COERCE_EXPLICIT_CALL",
  relpersistence: "p",
  inh: true,
};

/** Where something was in the text (`location`, `rexpr_list_start`...): not what it means. */
const POSITION_FIELD = /location$|^stmt_len$|list_start$|list_end$/;

function sameTree(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, i) => sameTree(item, right[i]));
  }
  if (typeof left !== "object" || typeof right !== "object" || left === null || right === null) return false;
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (POSITION_FIELD.test(key)) continue;
    const x = a[key];
    const y = b[key];
    if (isDefault(key, x) && isDefault(key, y)) continue;
    if (!sameTree(x, y)) return false;
  }
  return true;
}

/** Absent, or the value the grammar would give (false, 0, "", [] are absent in its trees). */
function isDefault(key: string, value: unknown): boolean {
  if (value === undefined || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value) && value.length === 0) return true;
  // A plain LIMIT or OFFSET reads back as LIMIT_OPTION_COUNT: the same as the default; only
  // WITH TIES differs.
  if (key === "limitOption" && value === "LIMIT_OPTION_COUNT") return true;
  return key in DEFAULT_FIELDS && DEFAULT_FIELDS[key] === value;
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
