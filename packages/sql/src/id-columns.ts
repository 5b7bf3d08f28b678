import { type Node, nodeAs, type RangeVar, stringValue } from "./ast.js";
import { parseOne } from "./parser.js";

/** A column a DDL statement gives ids from a sequence: the sequence is each server's own. */
export interface IdColumn {
  readonly schema: string | undefined;
  readonly table: string;
  readonly column: string;
  /** `serial` (smallserial/serial/bigserial), an identity column, or a DEFAULT calling nextval. */
  readonly kind: "serial" | "identity" | "nextval";
}

const SERIAL_TYPES: ReadonlySet<string> = new Set([
  "smallserial",
  "serial",
  "bigserial",
  "serial2",
  "serial4",
  "serial8",
]);

/**
 * The columns a CREATE TABLE or ALTER TABLE makes take their values from a sequence: each region
 * has its own copy of the sequence, so without more, two regions hand out the same ids.
 *
 * @example
 * idColumns("ALTER TABLE orders ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY");
 * // [{ schema: undefined, table: "orders", column: "n", kind: "identity" }]
 */
export function idColumns(text: string): IdColumn[] {
  const tree = parseOne(text);
  const out: IdColumn[] = [];
  const create = nodeAs(tree, "CreateStmt");
  if (create?.relation !== undefined) {
    for (const element of create.tableElts ?? []) columnDef(create.relation, element, out);
    return out;
  }
  const alter = nodeAs(tree, "AlterTableStmt");
  if (alter?.relation === undefined || alter.objtype !== "OBJECT_TABLE") return out;
  for (const item of alter.cmds ?? []) {
    const cmd = nodeAs(item, "AlterTableCmd");
    if (cmd === undefined) continue;
    switch (cmd.subtype) {
      case "AT_AddColumn":
        columnDef(alter.relation, cmd.def, out);
        break;
      case "AT_AddIdentity":
        out.push(idColumn(alter.relation, cmd.name ?? "", "identity"));
        break;
      case "AT_ColumnDefault":
        if (callsNextval(cmd.def)) out.push(idColumn(alter.relation, cmd.name ?? "", "nextval"));
        break;
      default:
        break;
    }
  }
  return out;
}

function idColumn(relation: RangeVar, column: string, kind: IdColumn["kind"]): IdColumn {
  return { schema: relation.schemaname, table: relation.relname ?? "", column, kind };
}

function columnDef(relation: RangeVar, element: Node | undefined, out: IdColumn[]): void {
  const def = nodeAs(element, "ColumnDef");
  if (def === undefined) return;
  const names = def.typeName?.names ?? [];
  const type = names.length === 1 ? stringValue(names[0])?.toLowerCase() : undefined;
  const column = def.colname ?? "";
  if (type !== undefined && SERIAL_TYPES.has(type) && (def.typeName?.arrayBounds?.length ?? 0) === 0) {
    out.push(idColumn(relation, column, "serial"));
    return;
  }
  for (const c of def.constraints ?? []) {
    const constraint = nodeAs(c, "Constraint");
    if (constraint?.contype === "CONSTR_IDENTITY") out.push(idColumn(relation, column, "identity"));
    else if (constraint?.contype === "CONSTR_DEFAULT" && callsNextval(constraint.raw_expr))
      out.push(idColumn(relation, column, "nextval"));
  }
}

function callsNextval(expr: unknown): boolean {
  if (expr === null || typeof expr !== "object") return false;
  if (Array.isArray(expr)) return expr.some(callsNextval);
  for (const [key, value] of Object.entries(expr as Record<string, unknown>)) {
    if (key === "FuncCall") {
      const name = (value as { funcname?: Node[] }).funcname?.at(-1);
      if (stringValue(name)?.toLowerCase() === "nextval") return true;
    }
    if (callsNextval(value)) return true;
  }
  return false;
}
