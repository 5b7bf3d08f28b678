import type { Node } from "./ast.js";
import { walkOf } from "./classify.js";
import { byteToCharOffset, isAscii, parseOne } from "./parser.js";

const NO_KEYS = { keyColumns: new Map<string, string>() };

/**
 * The tables a statement names without a schema (CTE references excluded: they name no table),
 * each name once, in order of appearance.
 */
export function unqualifiedTables(text: string): string[] {
  const names = new Set<string>();
  for (const occurrence of occurrencesOf(text)) {
    if (occurrence.schema === undefined) names.add(occurrence.name);
  }
  return [...names];
}

/**
 * The statement with each unqualified table name given the schema `schemaOf` resolves it to, the
 * rest of its text (comments, hints, spelling) untouched. Names `schemaOf` leaves undefined stay
 * unqualified. The schema is spliced in front of the name where the parser found it, so a quoted
 * or mixed-case name keeps its spelling and column references through it keep working
 * (`orders.id` still names the relation of `app.orders`).
 *
 * @example
 * qualifyTables("SELECT o.id FROM orders o", (name) => (name === "orders" ? "app" : undefined));
 * // 'SELECT o.id FROM "app".orders o'
 */
export function qualifyTables(text: string, schemaOf: (name: string) => string | undefined): string {
  const at: { offset: number; schema: string }[] = [];
  for (const occurrence of occurrencesOf(text)) {
    if (occurrence.schema !== undefined) continue;
    const schema = schemaOf(occurrence.name);
    const location = occurrence.rangeVar.location;
    if (schema === undefined || location === undefined || location < 0) continue;
    at.push({ offset: isAscii(text) ? location : byteToCharOffset(text, location), schema });
  }
  at.sort((a, b) => b.offset - a.offset);
  let qualified = text;
  for (const { offset, schema } of at) {
    qualified = `${qualified.slice(0, offset)}${quoteIdent(schema)}.${qualified.slice(offset)}`;
  }
  return qualified;
}

function occurrencesOf(text: string) {
  const node: Node | undefined = parseOne(text);
  return node === undefined ? [] : (walkOf(node, NO_KEYS)?.occurrences ?? []);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
