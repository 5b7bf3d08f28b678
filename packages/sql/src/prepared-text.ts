import { nodeAs } from "./ast.js";
import { deparse } from "./deparse.js";
import { parseOne } from "./parser.js";

/**
 * The statement an SQL-level `PREPARE name [(types)] AS <statement>` prepares, as SQL text with
 * its parameters as `$n`, or undefined when `text` is not one PREPARE. Read from the text itself
 * (not a cached analysis, whose literals may be another statement's of the same shape), so a
 * caller can analyse and route the statement each EXECUTE would run.
 *
 * @example
 * preparedStatementText("PREPARE p (text) AS SELECT * FROM users WHERE tenant_id = $1");
 * // "SELECT * FROM users WHERE tenant_id = $1"
 */
export function preparedStatementText(text: string): string | undefined {
  const node = parseOne(text);
  if (node === undefined) return undefined;
  const query = nodeAs(node, "PrepareStmt")?.query;
  return query === undefined ? undefined : deparse(query);
}
