import { nodeAs, stringValue } from "./ast.js";
import { type RowSetDependence, rowSetDependence } from "./row-set-dependence.js";
import type { WalkBlock, WalkResult } from "./statement-walker.js";

/**
 * Run in every region, a statement is exact only if each inner query block computes the same rows
 * from a region's share as from all of them. A block that aggregates, de-duplicates, cuts (LIMIT),
 * ranks (window functions) or combines sets over geo-partitioned rows does not — unless its rows are
 * tied to an outer row by the shard key (a correlated sub-query), or it groups by the key (every
 * group then lives in one region).
 *
 * Returns why not, or undefined when every inner block is regional.
 */
export function nonRegionalBlock(walk: WalkResult, topBlocks: ReadonlySet<number>): string | undefined {
  const children = new Map<number, number[]>();
  for (const b of walk.blocks) {
    if (b.parent === undefined) continue;
    const list = children.get(b.parent) ?? [];
    list.push(b.id);
    children.set(b.parent, list);
  }
  const subtree = (id: number): Set<number> => {
    const out = new Set<number>([id]);
    const stack = [id];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      for (const child of children.get(next) ?? []) {
        out.add(child);
        stack.push(child);
      }
    }
    return out;
  };
  for (const block of walk.blocks) {
    if (topBlocks.has(block.id)) continue;
    const why = rowSetDependence(block);
    if (why === undefined) continue;
    const blocks = subtree(block.id);
    const keyed = walk.occurrences
      .map((o, i) => ({ o, i }))
      .filter(({ o }) => o.keyColumn !== undefined && blocks.has(o.block))
      .map(({ i }) => i);
    if (keyed.length === 0) continue;
    // Only a correlation ties a block to one outer row (it is evaluated per row); `k IN (SELECT k ...)`
    // runs once for the whole statement.
    const tiedOutside = keyed.every((i) =>
      walk.links.some((l) => {
        if (l.via !== "correlation") return false;
        const other = l.left === i ? l.right : l.right === i ? l.left : undefined;
        const otherBlock = other === undefined ? undefined : walk.occurrences[other]?.block;
        return otherBlock !== undefined && !blocks.has(otherBlock);
      }),
    );
    if (tiedOutside) continue;
    if (why === "aggregates" && groupsByKey(block, walk, keyed)) continue;
    return `a sub-query that ${DESCRIPTION[why]} over several regions`;
  }
  return undefined;
}

const DESCRIPTION: Readonly<Record<RowSetDependence, string>> = {
  aggregates: "aggregates",
  windows: "uses window functions",
  distinct: "removes duplicates",
  limit: "cuts rows with LIMIT or OFFSET",
  "set-operation": "combines sets with UNION, INTERSECT or EXCEPT",
};

/** Every keyed table of the block is its own and is grouped by its key column. */
function groupsByKey(block: WalkBlock, walk: WalkResult, keyed: readonly number[]): boolean {
  const select = nodeAs(block.statement, "SelectStmt");
  const groupBy = select?.groupClause ?? [];
  return keyed.every((i) => {
    const o = walk.occurrences[i];
    if (o === undefined || o.block !== block.id) return false;
    const qualifier = o.alias ?? o.name;
    return groupBy.some((g) => {
      const fields = nodeAs(g, "ColumnRef")?.fields ?? [];
      const column = stringValue(fields[fields.length - 1]);
      if (column !== o.keyColumn) return false;
      if (fields.length === 2) return stringValue(fields[0]) === qualifier;
      return (
        fields.length === 1 &&
        block.scope.occurrences.filter((x) => walk.occurrences[x]?.keyColumn === column).length === 1
      );
    });
  });
}
