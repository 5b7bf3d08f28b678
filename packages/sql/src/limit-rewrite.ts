import type { LimitSpec, RowCount } from "./analysis.js";
import { type Node, nodeAs, type SelectStmt } from "./ast.js";
import { integerConst } from "./deparse.js";

export interface RegionLimit {
  readonly spec: LimitSpec | undefined;
  /** What each region's LIMIT becomes: count + offset (the proxy applies the offset once). */
  readonly regionCount: Node | undefined;
}

function rowCount(node: Node | undefined): RowCount | undefined | "unsupported" {
  if (node === undefined) return undefined;
  const constant = nodeAs(node, "A_Const");
  if (constant !== undefined) {
    if (constant.isnull === true) return undefined;
    if (constant.ival !== undefined) return { kind: "constant", value: constant.ival.ival ?? 0 };
    if (constant.fval !== undefined) {
      const value = Number(constant.fval.fval);
      return Number.isSafeInteger(value) ? { kind: "constant", value } : "unsupported";
    }
    return "unsupported";
  }
  const param = nodeAs(node, "ParamRef");
  if (param !== undefined) return { kind: "param", index: param.number ?? 0 };
  return "unsupported";
}

/** LIMIT/OFFSET of a statement, and the LIMIT each region runs; `unsupported` for expressions. */
export function regionLimit(select: SelectStmt): RegionLimit | "unsupported" {
  const count = rowCount(select.limitCount);
  const offset = rowCount(select.limitOffset);
  if (count === "unsupported" || offset === "unsupported") return "unsupported";
  if (count === undefined && offset === undefined) return { spec: undefined, regionCount: undefined };
  const spec: LimitSpec = { count, offset };
  if (count === undefined) return { spec, regionCount: undefined };
  if (offset === undefined) return { spec, regionCount: select.limitCount };
  if (count.kind === "constant" && offset.kind === "constant")
    return { spec, regionCount: integerConst(count.value + offset.value) };
  return {
    spec,
    regionCount: {
      A_Expr: {
        kind: "AEXPR_OP",
        name: [{ String: { sval: "+" } }],
        lexpr: select.limitCount as Node,
        rexpr: select.limitOffset as Node,
      },
    },
  };
}

/** A copy of `select` whose LIMIT is the regions' (count + offset) and which has no OFFSET. */
export function withRegionLimit(select: SelectStmt, limit: RegionLimit): SelectStmt {
  const copy: SelectStmt = { ...select };
  delete copy.limitOffset;
  if (limit.regionCount === undefined) {
    delete copy.limitCount;
    copy.limitOption = "LIMIT_OPTION_DEFAULT";
  } else {
    copy.limitCount = limit.regionCount;
    copy.limitOption = "LIMIT_OPTION_COUNT";
  }
  return copy;
}
