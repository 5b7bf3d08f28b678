import type { KeyValue } from "./analysis.js";
import { lastName, type Node, nodeAs, type TypeName } from "./ast.js";
import { parseArrayLiteral } from "./key-lattice.js";

/** The type a cast names, by its last name part (`pg_catalog.int8` -> `int8`). */
export function castName(typeName: TypeName | undefined): string | undefined {
  return lastName(typeName?.names);
}

function isArrayType(typeName: TypeName | undefined): boolean {
  return (typeName?.arrayBounds?.length ?? 0) > 0;
}

function withCast(value: KeyValue, cast: string | undefined): KeyValue {
  return cast === undefined ? value : { ...value, cast };
}

/** A constant or a parameter, optionally cast once: what a key may be compared with. */
export function keyValueOf(node: Node | undefined): KeyValue | undefined {
  const constant = nodeAs(node, "A_Const");
  if (constant !== undefined) {
    if (constant.isnull === true) return undefined;
    if (constant.ival !== undefined)
      return { kind: "literal", type: "integer", text: String(constant.ival.ival ?? 0) };
    if (constant.fval !== undefined)
      return { kind: "literal", type: "numeric", text: constant.fval.fval ?? "0" };
    if (constant.sval !== undefined)
      return { kind: "literal", type: "string", text: constant.sval.sval ?? "" };
    if (constant.boolval !== undefined) {
      return { kind: "literal", type: "boolean", text: constant.boolval.boolval === true ? "true" : "false" };
    }
    if (constant.bsval !== undefined)
      return { kind: "literal", type: "bit-string", text: constant.bsval.bsval ?? "" };
    return undefined;
  }
  const param = nodeAs(node, "ParamRef");
  if (param !== undefined) return { kind: "param", index: param.number ?? 0 };
  const cast = nodeAs(node, "TypeCast");
  // A cast with a length (`::varchar(3)`, `::char(5)`) may change the value: not a key value.
  if (cast !== undefined && (cast.typeName?.typmods?.length ?? 0) > 0) return undefined;
  if (cast !== undefined && !isArrayType(cast.typeName)) {
    const inner = nodeAs(cast.arg, "A_Const") !== undefined || nodeAs(cast.arg, "ParamRef") !== undefined;
    if (!inner) return undefined;
    const value = keyValueOf(cast.arg);
    return value === undefined ? undefined : withCast(value, castName(cast.typeName));
  }
  return undefined;
}

/** Elements of an array compared with `= ANY(...)`. Undefined when not understood. */
export function keyValuesOfArray(node: Node | undefined): KeyValue[] | undefined {
  const param = nodeAs(node, "ParamRef");
  if (param !== undefined) return [{ kind: "param-array", index: param.number ?? 0 }];
  const constant = nodeAs(node, "A_Const");
  if (constant?.sval !== undefined) return arrayLiteralValues(constant.sval.sval ?? "", undefined);
  const array = nodeAs(node, "A_ArrayExpr");
  if (array !== undefined) return elementValues(array.elements ?? [], undefined);
  const cast = nodeAs(node, "TypeCast");
  if (cast !== undefined && isArrayType(cast.typeName)) {
    const element = castName(cast.typeName);
    const innerParam = nodeAs(cast.arg, "ParamRef");
    if (innerParam !== undefined)
      return [withCast({ kind: "param-array", index: innerParam.number ?? 0 }, element)];
    const innerConst = nodeAs(cast.arg, "A_Const");
    if (innerConst?.sval !== undefined) return arrayLiteralValues(innerConst.sval.sval ?? "", element);
    const innerArray = nodeAs(cast.arg, "A_ArrayExpr");
    if (innerArray !== undefined) return elementValues(innerArray.elements ?? [], element);
  }
  return undefined;
}

/** Elements of an array literal's text, as the literals they denote. */
export function arrayLiteralValues(text: string, cast: string | undefined): KeyValue[] | undefined {
  const items = parseArrayLiteral(text);
  if (items === undefined) return undefined;
  return items.map((item) => withCast({ kind: "literal", type: "string", text: item }, cast));
}

function elementValues(elements: readonly Node[], cast: string | undefined): KeyValue[] | undefined {
  const out: KeyValue[] = [];
  for (const element of elements) {
    const value = keyValueOf(element);
    if (value === undefined || value.kind === "param-array") return undefined;
    out.push(cast === undefined || value.cast !== undefined ? value : withCast(value, cast));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Key values as PostgreSQL compares them with the key column
// ---------------------------------------------------------------------------------------------

/** The shard key's type, as the routing configuration names it. */
export type KeyType = "text" | "integer";

/** Casts under which a text key compares the value's own characters. */
const TEXT_CASTS: ReadonlySet<string> = new Set(["text", "varchar"]);
/** Casts under which an integer key compares the value's exact integer (numeric compares exactly too). */
const INTEGER_CASTS: ReadonlySet<string> = new Set(["int2", "int4", "int8", "numeric"]);

const DECIMAL = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?\s*$/;
const INTEGER = /^\s*[+-]?\d+\s*$/;

/** The integer a decimal literal denotes, when it is one exactly (`5.0`, `5e0`, `50e-1`). */
function exactInteger(text: string): string | undefined {
  const m = DECIMAL.exec(text);
  if (m === null) return undefined;
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = m;
  if (whole.length === 0 && fraction.length === 0) return undefined;
  let digits = `${whole}${fraction}`.replace(/^0+/, "");
  let scale = Number(exponent) - fraction.length;
  if (digits.length === 0) return "0";
  while (scale < 0 && digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    scale++;
  }
  if (scale < 0) return undefined;
  if (digits.length + scale > 40) return undefined;
  const value = BigInt(digits + "0".repeat(scale));
  return (sign === "-" ? -value : value).toString();
}

/**
 * The value as the key column would compare it, in one canonical text (so two spellings of one
 * key are one value), or undefined when that is not certain: then it must constrain nothing.
 *
 * - text keys: a string literal, bare or cast to text/varchar, is its own characters; any other
 *   cast (char(n), name, citext, a domain) may change or fold them. Numbers and booleans compared
 *   with a text column are PostgreSQL's error wherever it runs, so they are kept as written.
 * - integer keys: an integer literal, a decimal literal that is exactly an integer (`5.0`), a
 *   string of digits (`'05'`), bare or cast to int2/int4/int8/numeric, is that integer. A float
 *   cast (several integers compare equal to one float8) or any other spelling is not.
 * - parameters are read at Bind (the planner canonicalises their text), unless a cast makes their
 *   comparison inexact in the same way.
 */
export function canonicalKeyValue(value: KeyValue, keyType: KeyType): KeyValue | undefined {
  if (value.kind !== "literal") {
    if (value.cast === undefined) return value;
    return (keyType === "text" ? TEXT_CASTS : INTEGER_CASTS).has(value.cast) ? value : undefined;
  }
  if (keyType === "text") {
    if (value.cast !== undefined && !TEXT_CASTS.has(value.cast)) return undefined;
    // An integer's text is its digits; a decimal's text form is PostgreSQL's numeric output.
    if (value.cast !== undefined && value.type !== "string" && value.type !== "integer") return undefined;
    return value;
  }
  if (value.cast !== undefined && !INTEGER_CASTS.has(value.cast)) return undefined;
  switch (value.type) {
    case "integer":
      return { ...value, text: BigInt(value.text).toString() };
    case "numeric": {
      const integer = exactInteger(value.text);
      return integer === undefined ? undefined : { ...value, text: integer };
    }
    case "string": {
      // int2/int4/int8 input reads optional spaces, a sign and digits; numeric input also decimals.
      if (INTEGER.test(value.text)) return { ...value, text: BigInt(value.text.trim()).toString() };
      if (value.cast !== "numeric") return undefined;
      const integer = exactInteger(value.text);
      return integer === undefined ? undefined : { ...value, text: integer };
    }
    default:
      return undefined;
  }
}

/** Every value canonical, or undefined when one is not (the constraint is then `any`). */
export function canonicalKeyValues(values: readonly KeyValue[], keyType: KeyType): KeyValue[] | undefined {
  const out: KeyValue[] = [];
  for (const v of values) {
    const c = canonicalKeyValue(v, keyType);
    if (c === undefined) return undefined;
    out.push(c);
  }
  return out;
}
