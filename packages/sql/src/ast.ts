/**
 * A narrow typed facade over libpg-query's JSON parse tree: the node types routing reads, and
 * helpers that narrow a `Node` to one kind. The full node catalogue stays inside libpg-query.
 */
import type { Node } from "libpg-query";

export type {
  A_ArrayExpr,
  A_Const,
  A_Expr,
  BoolExpr,
  ColumnRef,
  CommonTableExpr,
  CopyStmt,
  DeleteStmt,
  ExplainStmt,
  FuncCall,
  InsertStmt,
  JoinExpr,
  MergeStmt,
  MergeWhenClause,
  Node,
  ParamRef,
  RangeFunction,
  RangeSubselect,
  RangeVar,
  RawStmt,
  ResTarget,
  SelectStmt,
  SortBy,
  SubLink,
  TransactionStmt,
  TypeCast,
  TypeName,
  UpdateStmt,
  VariableSetStmt,
  WithClause,
} from "libpg-query";

/** Every node tag (the single key of a node object). */
export type NodeTag = Node extends infer U ? (U extends unknown ? keyof U : never) : never;
/** The payload type of a tag. */
export type NodeOf<K extends NodeTag> =
  Extract<Node, { [P in K]: unknown }> extends infer U ? (U extends Record<K, infer V> ? V : never) : never;

export function tagOf(node: Node): NodeTag {
  for (const key in node) return key as NodeTag;
  throw new TypeError("empty parse tree node");
}

/** The payload when `node` is of kind `tag`. */
export function nodeAs<K extends NodeTag>(node: Node | undefined, tag: K): NodeOf<K> | undefined {
  if (node === undefined) return undefined;
  return (node as unknown as Record<string, NodeOf<K> | undefined>)[tag];
}

export function wrap<K extends NodeTag>(tag: K, payload: NodeOf<K>): Node {
  return { [tag]: payload } as unknown as Node;
}

/** The `sval` of a String node (names in name lists). */
export function stringValue(node: Node | undefined): string | undefined {
  return nodeAs(node, "String")?.sval;
}

/** Last element of a qualified name list (`pg_catalog.count` -> `count`). */
export function lastName(names: readonly Node[] | undefined): string | undefined {
  if (names === undefined || names.length === 0) return undefined;
  return stringValue(names[names.length - 1]);
}

/** Deep equality of two subtrees, ignoring source locations. */
export function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameTree(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => !isLocationKey(k));
  const kb = Object.keys(rb).filter((k) => !isLocationKey(k));
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameTree(ra[k], rb[k]));
}

function isLocationKey(key: string): boolean {
  return (
    key === "location" ||
    key.endsWith("_location") ||
    key === "list_start" ||
    key === "list_end" ||
    key.startsWith("rexpr_list")
  );
}

export function cloneTree<T>(tree: T): T {
  return structuredClone(tree);
}

/** Whether any node of `tree` (its tag and body) passes `test`. */
export function containsNode(tree: unknown, test: (tag: string, body: unknown) => boolean): boolean {
  if (tree === null || typeof tree !== "object") return false;
  if (Array.isArray(tree)) return tree.some((item) => containsNode(item, test));
  for (const [key, value] of Object.entries(tree as Record<string, unknown>)) {
    if (test(key, value) || containsNode(value, test)) return true;
  }
  return false;
}
