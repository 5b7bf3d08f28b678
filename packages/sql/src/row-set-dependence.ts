import { type Node, nodeAs, stringValue } from "./ast.js";

/**
 * Why a query block's rows for one shard key may depend on the rows of other keys: it cuts rows
 * (LIMIT, OFFSET), ranks them (window functions), picks one per group of something else
 * (DISTINCT ON), aggregates them, or combines sets. Such a block computes other rows from one
 * region's share than from all of them, so neither a key constraint nor a co-location may be
 * carried through it.
 */
export type RowSetDependence = "aggregates" | "windows" | "distinct" | "limit" | "set-operation";

/** What a block's flags say about it (the walker's WalkBlock has them). */
export interface BlockFlags {
  readonly statement: Node;
  readonly aggregates: boolean;
  readonly windows: boolean;
}

/** The block's dependence on other keys' rows, or undefined when each output row is a row's own. */
export function rowSetDependence(block: BlockFlags): RowSetDependence | undefined {
  const select = nodeAs(block.statement, "SelectStmt");
  if (select === undefined) return undefined;
  const op = select.op ?? "SETOP_NONE";
  if (op !== "SETOP_NONE" && !(op === "SETOP_UNION" && select.all === true)) return "set-operation";
  if (select.limitCount !== undefined && nodeAs(select.limitCount, "A_Const")?.isnull !== true)
    return "limit";
  if (select.limitOffset !== undefined) return "limit";
  if (block.windows) return "windows";
  if ((select.distinctClause?.length ?? 0) > 0) return "distinct";
  if (block.aggregates) return "aggregates";
  return undefined;
}

/**
 * True when a constraint on `keyColumn` may pass through the block: its rows for a key are
 * computed from that key's rows alone. A plain DISTINCT keeps each key's rows apart, and so does
 * aggregating grouped by the key column (`qualifier.key`, or the bare column name).
 */
export function keepsKeysApart(block: BlockFlags, keyColumn: string, qualifier: string | undefined): boolean {
  const why = rowSetDependence(block);
  if (why === undefined) return true;
  const select = nodeAs(block.statement, "SelectStmt");
  if (why === "distinct")
    return (
      (select?.distinctClause ?? []).every((item) => Object.keys(item).length === 0) && !block.aggregates
    );
  if (why !== "aggregates") return false;
  return (select?.groupClause ?? []).some((item) => {
    const fields = nodeAs(item, "ColumnRef")?.fields ?? [];
    if (stringValue(fields[fields.length - 1]) !== keyColumn) return false;
    return fields.length === 1 || (fields.length === 2 && stringValue(fields[0]) === qualifier);
  });
}
