/**
 * The generated statements' syntax, kept as a tree until the end so that a wrong statement can be
 * shrunk (a conjunct, a join side, an output dropped) and rendered again.
 */
export type SqlType = "int" | "num" | "text" | "bool" | "real" | "ts" | "bits" | "char" | "tarr" | "comp";

export interface Output {
  readonly expr: string;
  readonly type: SqlType;
}

export type FromNode =
  | { readonly kind: "item"; readonly sql: string }
  | {
      readonly kind: "join";
      readonly join: string;
      readonly left: FromNode;
      readonly right: FromNode;
      readonly on?: string | undefined;
    };

export interface OrderLimit {
  /** ORDER BY items (positions or expressions with direction). */
  readonly orderBy: readonly string[];
  /** True when the ORDER BY lists every output column, so the order is unique up to identical rows. */
  readonly total: boolean;
  readonly limit?: string | undefined;
  readonly offset?: string | undefined;
  /** `FETCH FIRST n ROWS ONLY` or `... WITH TIES` instead of LIMIT. */
  readonly fetch?: { readonly count: string; readonly ties: boolean } | undefined;
}

export interface SelectNode {
  readonly kind: "select";
  readonly with?: { readonly recursive: boolean; readonly ctes: readonly string[] } | undefined;
  readonly distinct?: "all" | { readonly on: readonly string[] } | undefined;
  readonly outputs: readonly Output[];
  readonly from?: FromNode | undefined;
  readonly where: readonly string[];
  readonly groupBy?: string | undefined;
  readonly having?: string | undefined;
  readonly order?: OrderLimit | undefined;
  /** Aggregates, windows, DISTINCT or a limit at the top: the TLP identity does not hold as is. */
  readonly aggregated: boolean;
  readonly windowed: boolean;
}

export interface SetOpNode {
  readonly kind: "setop";
  readonly with?: { readonly recursive: boolean; readonly ctes: readonly string[] } | undefined;
  readonly op: string;
  readonly left: QueryNode;
  readonly right: QueryNode;
  readonly outputs: readonly Output[];
  readonly order?: OrderLimit | undefined;
}

export type QueryNode = SelectNode | SetOpNode;

function renderFrom(node: FromNode): string {
  if (node.kind === "item") return node.sql;
  const right = node.right.kind === "join" ? `(${renderFrom(node.right)})` : renderFrom(node.right);
  return `${renderFrom(node.left)} ${node.join} ${right}${node.on === undefined ? "" : ` ON ${node.on}`}`;
}

function renderOrder(order: OrderLimit | undefined): string {
  if (order === undefined) return "";
  let text = order.orderBy.length > 0 ? ` ORDER BY ${order.orderBy.join(", ")}` : "";
  if (order.limit !== undefined) text += ` LIMIT ${order.limit}`;
  if (order.offset !== undefined) text += ` OFFSET ${order.offset}`;
  if (order.fetch !== undefined)
    text += ` FETCH FIRST ${order.fetch.count} ROWS ${order.fetch.ties ? "WITH TIES" : "ONLY"}`;
  return text;
}

function renderWith(w: SelectNode["with"]): string {
  if (w === undefined || w.ctes.length === 0) return "";
  return `WITH ${w.recursive ? "RECURSIVE " : ""}${w.ctes.join(", ")} `;
}

/** The query as SQL text. `extraWhere` adds one conjunct (TLP's partitions). */
export function render(node: QueryNode, extraWhere?: string): string {
  if (node.kind === "setop") {
    return `${renderWith(node.with)}(${render(node.left)}) ${node.op} (${render(node.right)})${renderOrder(node.order)}`;
  }
  const distinct =
    node.distinct === undefined
      ? ""
      : node.distinct === "all"
        ? "DISTINCT "
        : `DISTINCT ON (${node.distinct.on.join(", ")}) `;
  const outputs = node.outputs.map((output, index) => `${output.expr} AS c${index + 1}`).join(", ");
  const where = extraWhere === undefined ? node.where : [...node.where, extraWhere];
  return [
    `${renderWith(node.with)}SELECT ${distinct}${outputs}`,
    node.from === undefined ? "" : ` FROM ${renderFrom(node.from)}`,
    where.length === 0 ? "" : ` WHERE ${where.map((w) => (where.length > 1 ? `(${w})` : w)).join(" AND ")}`,
    node.groupBy === undefined ? "" : ` GROUP BY ${node.groupBy}`,
    node.having === undefined ? "" : ` HAVING ${node.having}`,
    renderOrder(node.order),
  ].join("");
}

/** True when the top-level ORDER BY fixes the order of every row (so order is part of the answer). */
export function isTotallyOrdered(node: QueryNode): boolean {
  return node.order?.total === true && node.order.orderBy.length > 0;
}

/** Smaller variants of a query, for shrinking a wrong one: each drops one part. */
export function shrinkCandidates(node: QueryNode): QueryNode[] {
  const out: QueryNode[] = [];
  if (node.kind === "setop") {
    out.push(node.left, node.right);
    if (node.order !== undefined) out.push({ ...node, order: undefined });
    if (node.with !== undefined) out.push({ ...node, with: undefined });
    for (const left of shrinkCandidates(node.left)) out.push({ ...node, left });
    for (const right of shrinkCandidates(node.right)) out.push({ ...node, right });
    return out;
  }
  if (node.with !== undefined) {
    node.with.ctes.forEach((_, index) => {
      out.push({ ...node, with: { ...node.with!, ctes: node.with!.ctes.filter((__, i) => i !== index) } });
    });
  }
  if (node.order !== undefined) {
    // DISTINCT ON without its ORDER BY picks any row of each group: drop both together.
    out.push({ ...node, order: undefined, distinct: node.distinct === "all" ? "all" : undefined });
    if (node.order.offset !== undefined) out.push({ ...node, order: { ...node.order, offset: undefined } });
  }
  if (node.having !== undefined) out.push({ ...node, having: undefined });
  if (node.distinct !== undefined) out.push({ ...node, distinct: undefined });
  node.where.forEach((_, index) => {
    out.push({ ...node, where: node.where.filter((__, i) => i !== index) });
  });
  if (node.outputs.length > 1) {
    node.outputs.forEach((output) => {
      out.push({
        ...node,
        outputs: [output],
        distinct: node.distinct === "all" ? "all" : undefined,
        order: node.order === undefined ? undefined : { ...node.order, orderBy: ["1"], total: true },
      });
    });
  }
  if (node.from?.kind === "join") {
    out.push({ ...node, from: node.from.left }, { ...node, from: node.from.right });
    if (node.from.join !== "JOIN" && node.from.join !== "CROSS JOIN" && !node.from.join.includes("LATERAL"))
      out.push({ ...node, from: { ...node.from, join: "JOIN" } });
  }
  return out;
}
