import { type Node, nodeAs } from "./ast.js";
import { deparse } from "./deparse.js";
import { parseOne } from "./parser.js";

/**
 * How many of the table's columns an INSERT without a column list fills: PostgreSQL gives its
 * values to the first n columns in table order, n being the VALUES rows' length or the source
 * query's output count. Undefined when the INSERT names its columns, has no rows (DEFAULT
 * VALUES), or its source's width cannot be read from the text (`SELECT *`, a set operation).
 */
export function insertColumnCount(text: string): number | undefined {
  const insert = nodeAs(parseOne(text), "InsertStmt");
  if (insert === undefined || insert.cols !== undefined) return undefined;
  const source = nodeAs(insert.selectStmt, "SelectStmt");
  if (source === undefined) return undefined;
  const first = nodeAs(source.valuesLists?.[0], "List");
  if (first !== undefined) return first.items?.length ?? 0;
  if ((source.op ?? "SETOP_NONE") !== "SETOP_NONE") return undefined;
  const targets = source.targetList ?? [];
  if (targets.some(isStar)) return undefined;
  return targets.length;
}

/**
 * The INSERT with the column list PostgreSQL would have used for it (`columns`, in table order,
 * as many as `insertColumnCount` says), so its key column can be read from each row.
 *
 * @example
 * insertWithColumns("INSERT INTO users VALUES ('bob', 7)", ["tenant_id", "id"]);
 * // "INSERT INTO users (tenant_id, id) VALUES ('bob', 7)"
 */
export function insertWithColumns(text: string, columns: readonly string[]): string {
  const insert = nodeAs(parseOne(text), "InsertStmt");
  if (insert === undefined) throw new TypeError("insertWithColumns applies only to INSERT");
  const cols = columns.map((name) => ({ ResTarget: { name } }) as Node);
  return deparse({ InsertStmt: { ...insert, cols } } as Node);
}

function isStar(target: Node): boolean {
  const fields = nodeAs(nodeAs(nodeAs(target, "ResTarget")?.val, "ColumnRef")?.fields?.at(-1), "A_Star");
  return fields !== undefined;
}
