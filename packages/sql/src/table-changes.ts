import { nodeAs, type RangeVar } from "./ast.js";
import { parseOne } from "./parser.js";

/** A DDL change to a table that the configuration names: its name, its schema, or one of its columns. */
export interface TableChange {
  readonly schema: string | undefined;
  readonly table: string;
  /** `rename` and `set-schema` move the table away from its [[tables]] name; the others touch `column`. */
  readonly kind: "rename" | "set-schema" | "rename-column" | "drop-column" | "retype-column";
  readonly column?: string;
}

/**
 * The changes an ALTER TABLE makes to a table's name, schema or columns: what would leave a
 * configured table (or its key column) no longer where the configuration says, so that regions
 * and proxy would disagree about where its rows live.
 *
 * @example
 * tableChanges("ALTER TABLE orders RENAME COLUMN tenant_id TO t");
 * // [{ schema: undefined, table: "orders", kind: "rename-column", column: "tenant_id" }]
 */
export function tableChanges(text: string): TableChange[] {
  const tree = parseOne(text);
  const change = (relation: RangeVar, kind: TableChange["kind"], column?: string): TableChange => ({
    schema: relation.schemaname,
    table: relation.relname ?? "",
    kind,
    ...(column === undefined ? {} : { column }),
  });
  const rename = nodeAs(tree, "RenameStmt");
  if (rename?.relation !== undefined) {
    if (rename.renameType === "OBJECT_TABLE") return [change(rename.relation, "rename")];
    if (rename.renameType === "OBJECT_COLUMN")
      return [change(rename.relation, "rename-column", rename.subname)];
    return [];
  }
  const moved = nodeAs(tree, "AlterObjectSchemaStmt");
  if (moved?.relation !== undefined && moved.objectType === "OBJECT_TABLE")
    return [change(moved.relation, "set-schema")];
  const alter = nodeAs(tree, "AlterTableStmt");
  if (alter?.relation === undefined || alter.objtype !== "OBJECT_TABLE") return [];
  const out: TableChange[] = [];
  for (const item of alter.cmds ?? []) {
    const cmd = nodeAs(item, "AlterTableCmd");
    if (cmd?.subtype === "AT_DropColumn") out.push(change(alter.relation, "drop-column", cmd.name));
    if (cmd?.subtype === "AT_AlterColumnType") out.push(change(alter.relation, "retype-column", cmd.name));
  }
  return out;
}
