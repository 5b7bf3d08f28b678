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
