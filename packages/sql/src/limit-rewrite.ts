import type { LimitSpec, RowCount } from "./analysis.js";
import { cloneTree, type Node, nodeAs, type SelectStmt } from "./ast.js";
import { integerConst } from "./deparse.js";

export interface RegionLimit {
  readonly spec: LimitSpec | undefined;
  /** What each region's LIMIT becomes: count + offset (the proxy applies the offset once). */
  readonly regionCount: Node | undefined;
  /**
   * What each region's OFFSET becomes: none, or for an OFFSET PostgreSQL may reject (a negative
   * constant, a parameter) one that raises the same error and skips nothing otherwise.
   */
  readonly regionOffset?: Node;
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

const INT8_MAX: Node = { A_Const: { fval: { fval: "9223372036854775807" } } };

function op(name: string, lexpr: Node, rexpr: Node): Node {
  return { A_Expr: { kind: "AEXPR_OP", name: [{ String: { sval: name } }], lexpr, rexpr } };
}

function minMax(op: "IS_GREATEST" | "IS_LEAST", args: Node[]): Node {
  return { MinMaxExpr: { op, args } } as Node;
}

/**
 * count + offset as a region's LIMIT, without PostgreSQL's errors changing: a negative count stays
 * itself (so the region raises 2201W), a sum past bigint is no limit at all (rather than an
 * overflow one server would not raise), a NULL count stays NULL (no limit), a NULL offset is 0.
 */
function regionCountOf(count: Node, offset: Node): Node {
  const skipped = minMax("IS_GREATEST", [cloneTree(offset), integerConst(0)]);
  return {
    CaseExpr: {
      args: [
        { CaseWhen: { expr: op("<", cloneTree(count), integerConst(0)), result: cloneTree(count) } },
        {
          CaseWhen: {
            expr: op(">", cloneTree(count), op("-", INT8_MAX, cloneTree(skipped))),
            result: { A_Const: { isnull: true } },
          },
        },
      ],
      defresult: op("+", cloneTree(count), skipped),
    },
  } as Node;
}

/** LIMIT/OFFSET of a statement, and the LIMIT each region runs; `unsupported` for expressions. */
export function regionLimit(select: SelectStmt): RegionLimit | "unsupported" {
  const count = rowCount(select.limitCount);
  const offset = rowCount(select.limitOffset);
  if (count === "unsupported" || offset === "unsupported") return "unsupported";
  if (count === undefined && offset === undefined) return { spec: undefined, regionCount: undefined };
  const spec: LimitSpec = { count, offset };
  // A negative constant is PostgreSQL's error (2201W, 2201X): every region raises it as written.
  if ((count?.kind === "constant" && count.value < 0) || (offset?.kind === "constant" && offset.value < 0)) {
    return {
      spec,
      regionCount: select.limitCount,
      ...(select.limitOffset === undefined ? {} : { regionOffset: select.limitOffset }),
    };
  }
  // A parameter OFFSET is checked by the regions (LEAST($n, 0) is negative exactly when it is) but
  // skips nothing there: the proxy or the home finish skips once.
  const regionOffset: Node | undefined =
    offset?.kind === "param"
      ? minMax("IS_LEAST", [cloneTree(select.limitOffset as Node), integerConst(0)])
      : undefined;
  const withOffset = regionOffset === undefined ? {} : { regionOffset };
  if (count === undefined) return { spec, regionCount: undefined, ...withOffset };
  if (offset === undefined || (offset.kind === "constant" && offset.value === 0))
    return { spec, regionCount: select.limitCount, ...withOffset };
  if (count.kind === "constant" && offset.kind === "constant")
    return { spec, regionCount: integerConst(count.value + offset.value) };
  return {
    spec,
    regionCount: regionCountOf(select.limitCount as Node, select.limitOffset as Node),
    ...withOffset,
  };
}

/** A copy of `select` whose LIMIT is the regions' (count + offset) and whose OFFSET skips nothing. */
export function withRegionLimit(select: SelectStmt, limit: RegionLimit): SelectStmt {
  const copy: SelectStmt = { ...select };
  delete copy.limitOffset;
  if (limit.regionOffset !== undefined) copy.limitOffset = limit.regionOffset;
  if (limit.regionCount === undefined) {
    delete copy.limitCount;
    copy.limitOption = "LIMIT_OPTION_DEFAULT";
  } else {
    copy.limitCount = limit.regionCount;
    copy.limitOption = "LIMIT_OPTION_COUNT";
  }
  return copy;
}
