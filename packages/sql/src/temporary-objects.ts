import { type Node, tagOf } from "./ast.js";

/** The schema names that mean the session's own temporary schema: `pg_temp`, or its `pg_temp_N` name. */
export function isTemporarySchema(name: string | undefined): boolean {
  return name !== undefined && (name === "pg_temp" || /^pg_temp_[0-9]+$/.test(name));
}

/** Fields of creating statements that hold the created object's name as a list of identifiers. */
const NAME_LISTS = ["defnames", "funcname", "typeName", "domainname", "conversion_name"] as const;

/** Fields of creating statements that hold the created relation. */
const RELATIONS = ["relation", "view", "sequence", "typevar"] as const;

interface RangeVarLike {
  readonly schemaname?: string;
  readonly relname?: string;
  readonly relpersistence?: string;
}

/**
 * The name of the temporary object a statement creates, when it creates one: a relation made
 * TEMP (`CREATE TEMP TABLE`, `SELECT ... INTO TEMP`), or any object whose name is qualified by
 * the temporary schema (`CREATE TABLE pg_temp.t`, `CREATE FUNCTION pg_temp.f()`, `CREATE
 * STATISTICS pg_temp.s`, a type or a domain there). Such an object lives in the one server
 * session that ran the statement, as a temporary table does, whichever way it was spelt.
 */
export function temporaryObjectCreated(node: Node): string | undefined {
  const tag = tagOf(node);
  const payload = (node as unknown as Record<string, Record<string, unknown>>)[tag] ?? {};
  if (tag === "SelectStmt" || tag === "CreateTableAsStmt") {
    const into = (tag === "SelectStmt" ? payload.intoClause : payload.into) as
      | { rel?: RangeVarLike }
      | undefined;
    return temporaryRelation(into?.rel);
  }
  if (!CREATING.has(tag)) return undefined;
  for (const field of RELATIONS) {
    const name = temporaryRelation(payload[field] as RangeVarLike | undefined);
    if (name !== undefined) return name;
  }
  for (const field of NAME_LISTS) {
    const parts = payload[field];
    if (!Array.isArray(parts) || parts.length < 2) continue;
    const names = parts.map((part: { String?: { sval?: string } }) => part?.String?.sval);
    if (isTemporarySchema(names[0])) return names.at(-1) ?? "";
  }
  return undefined;
}

/** Statements that create a named object (the ones whose name may put it in the temporary schema). */
const CREATING: ReadonlySet<string> = new Set([
  "CreateStmt",
  "ViewStmt",
  "CreateSeqStmt",
  "CompositeTypeStmt",
  "CreateEnumStmt",
  "CreateRangeStmt",
  "CreateDomainStmt",
  "CreateFunctionStmt",
  "CreateStatsStmt",
  "CreateConversionStmt",
  "DefineStmt",
]);

function temporaryRelation(relation: RangeVarLike | undefined): string | undefined {
  if (relation === undefined) return undefined;
  if (relation.relpersistence === "t" || isTemporarySchema(relation.schemaname))
    return relation.relname ?? "";
  return undefined;
}
