import type { Maintenance } from "./analysis.js";
import { type Node, nodeAs, type RangeVar, tagOf } from "./ast.js";

/** What classification needs of a maintenance command: its tag's command, the relations it names, the rest. */
export interface MaintenanceShape {
  /** The CommandComplete tag's command (`VACUUM`, `ANALYZE`, `REINDEX`, `CREATE INDEX`, `DROP INDEX`). */
  readonly command: string;
  readonly relations: readonly RangeVar[];
  readonly maintenance: Maintenance;
}

/**
 * Reads a maintenance command's parse tree: the relations it names (the tables whose copies it
 * must reach) and whether PostgreSQL lets it run inside a transaction block. The names are those
 * of PostgreSQL's own `PreventInTransactionBlock` calls, so a refusal inside a block can say
 * exactly what PostgreSQL says. Undefined for any other statement (CREATE INDEX and DROP without
 * CONCURRENTLY are transactional DDL).
 *
 * @example
 * maintenanceOf(parse("VACUUM users")).maintenance;
 * // { name: "VACUUM", outsideBlock: true, scope: "tables" }
 */
export function maintenanceOf(node: Node): MaintenanceShape | undefined {
  switch (tagOf(node)) {
    case "VacuumStmt": {
      const vacuum = nodeAs(node, "VacuumStmt");
      const relations = (vacuum?.rels ?? [])
        .map((rel) => nodeAs(rel, "VacuumRelation")?.relation)
        .filter((rel) => rel !== undefined);
      // ANALYZE is a VacuumStmt too; only VACUUM (with or without ANALYZE) needs its own transactions.
      const command = vacuum?.is_vacuumcmd === true ? "VACUUM" : "ANALYZE";
      return shape(command, relations, command, command === "VACUUM");
    }
    case "CheckPointStmt":
      return shape("CHECKPOINT", [], "CHECKPOINT", false);
    case "ReindexStmt": {
      const reindex = nodeAs(node, "ReindexStmt");
      const concurrently = (reindex?.params ?? []).some(
        (param) => nodeAs(param, "DefElem")?.defname === "concurrently" && !defElemFalse(param),
      );
      switch (reindex?.kind) {
        case "REINDEX_OBJECT_TABLE":
          return reindexShape(reindex.relation === undefined ? [] : [reindex.relation], concurrently);
        case "REINDEX_OBJECT_INDEX":
          // An index's table is not in the text: every region, where the index may be.
          return reindexShape([], concurrently);
        // PostgreSQL checks CONCURRENTLY first, so that is the name its refusal gives.
        case "REINDEX_OBJECT_SCHEMA":
          return shape("REINDEX", [], concurrently ? "REINDEX CONCURRENTLY" : "REINDEX SCHEMA", true);
        case "REINDEX_OBJECT_SYSTEM":
          return shape("REINDEX", [], concurrently ? "REINDEX CONCURRENTLY" : "REINDEX SYSTEM", true);
        default:
          return shape("REINDEX", [], concurrently ? "REINDEX CONCURRENTLY" : "REINDEX DATABASE", true);
      }
    }
    case "ClusterStmt": {
      const relation = nodeAs(node, "ClusterStmt")?.relation;
      // CLUSTER without a table reclusters every table, each in a transaction of its own.
      return relation === undefined
        ? shape("CLUSTER", [], "CLUSTER", true)
        : shape("CLUSTER", [relation], "CLUSTER", false);
    }
    case "IndexStmt": {
      const index = nodeAs(node, "IndexStmt");
      if (index?.concurrent !== true) return undefined;
      const created = shape(
        "CREATE INDEX",
        index.relation === undefined ? [] : [index.relation],
        "CREATE INDEX CONCURRENTLY",
        true,
      );
      if (index.idxname === undefined) return created;
      return { ...created, maintenance: { ...created.maintenance, index: index.idxname } };
    }
    case "LockStmt": {
      // A lock taken in one region would leave the table's rows elsewhere unlocked: every copy
      // is locked, each on the block's connection there, and held until the block ends.
      const relations = (nodeAs(node, "LockStmt")?.relations ?? [])
        .map((rel) => nodeAs(rel, "RangeVar"))
        .filter((rel) => rel !== undefined);
      const locked = shape("LOCK TABLE", relations, "LOCK TABLE", false);
      return { ...locked, maintenance: { ...locked.maintenance, blockOnly: true } };
    }
    case "RefreshMatViewStmt": {
      // Each region's materialized view is computed from that region's rows: refresh every copy.
      const relation = nodeAs(node, "RefreshMatViewStmt")?.relation;
      return shape(
        "REFRESH MATERIALIZED VIEW",
        relation === undefined ? [] : [relation],
        "REFRESH MATERIALIZED VIEW",
        false,
      );
    }
    case "DropStmt": {
      const drop = nodeAs(node, "DropStmt");
      if (drop?.concurrent !== true || drop.removeType !== "OBJECT_INDEX") return undefined;
      return shape("DROP INDEX", [], "DROP INDEX CONCURRENTLY", true);
    }
    default:
      return undefined;
  }
}

function reindexShape(relations: readonly RangeVar[], concurrently: boolean): MaintenanceShape {
  return shape("REINDEX", relations, concurrently ? "REINDEX CONCURRENTLY" : "REINDEX", concurrently);
}

function shape(
  command: string,
  relations: readonly RangeVar[],
  name: string,
  outsideBlock: boolean,
): MaintenanceShape {
  const scope = relations.length === 0 ? "everywhere" : "tables";
  return { command, relations, maintenance: { name, outsideBlock, scope } };
}

/** `CONCURRENTLY false` in the parenthesised option list turns it off. */
function defElemFalse(param: Node): boolean {
  const arg = nodeAs(param, "DefElem")?.arg;
  if (arg === undefined) return false;
  const value = nodeAs(arg, "A_Const");
  if (value?.boolval !== undefined) return value.boolval.boolval !== true;
  const text = value?.sval?.sval ?? nodeAs(arg, "String")?.sval;
  if (text !== undefined) return ["false", "off", "no", "0"].includes(text.toLowerCase());
  if (value?.ival !== undefined) return (value.ival.ival ?? 0) === 0;
  return false;
}
