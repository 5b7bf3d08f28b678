import { nodeAs } from "./ast.js";
import { deparse } from "./deparse.js";
import { parseOne } from "./parser.js";

/**
 * Rebuilds `INSERT ... VALUES` with only some of its rows, in the order given, from the parse tree:
 * the text has commas inside literals and the tree does not. Everything else (column list,
 * ON CONFLICT, RETURNING, WITH) is kept, so RETURNING rows come back in the order of `rows`.
 */
export function splitInsert(text: string, rows: readonly number[]): string {
  const tree = parseOne(text);
  const insert = nodeAs(tree, "InsertStmt");
  const values = nodeAs(insert?.selectStmt, "SelectStmt");
  const lists = values?.valuesLists;
  if (insert === undefined || values === undefined || lists === undefined) {
    throw new TypeError("split applies only to INSERT ... VALUES");
  }
  if (rows.length === 0) throw new RangeError("a split needs at least one row");
  const picked = rows.map((r) => {
    const row = lists[r];
    if (row === undefined) throw new RangeError(`no VALUES row ${r} (the statement has ${lists.length})`);
    return row;
  });
  return deparse({
    InsertStmt: { ...insert, selectStmt: { SelectStmt: { ...values, valuesLists: picked } } },
  });
}
