import type {
  CrossJoin,
  IsolationLevel,
  KeyValue,
  Maintenance,
  PrimaryReason,
  QueryBlock,
  SchemaInfo,
  SessionEffect,
  StatementFlags,
  StatementKind,
  TableRef,
  TransactionAction,
  TransactionControl,
} from "./analysis.js";
import { type Node, nodeAs, type RangeVar, stringValue, tagOf } from "./ast.js";
import { keyValueOf } from "./key-values.js";
import { maintenanceOf } from "./maintenance.js";
import { StatementWalker, type WalkResult } from "./statement-walker.js";
import { temporaryObjectCreated } from "./temporary-objects.js";

/**
 * Everything the analysis says about a statement that follows from its parse tree alone: no
 * text, no hints, no merge plan (those are added by the analyzer, the last one lazily).
 */
export interface AnalysisCore {
  readonly kind: StatementKind;
  readonly command: string;
  readonly readOnly: boolean;
  readonly needsPrimary: PrimaryReason | undefined;
  readonly transaction: TransactionControl | undefined;
  readonly sessionEffects: readonly SessionEffect[];
  readonly blocks: readonly QueryBlock[];
  readonly tables: readonly TableRef[];
  readonly links: WalkResult["links"];
  readonly crossJoins: readonly CrossJoin[];
  readonly flags: StatementFlags;
  readonly insertRows: InsertCore | undefined;
  readonly paramCount: number;
  readonly explain: { readonly analyze: boolean } | undefined;
  readonly mergeActions: readonly ("update" | "delete" | "insert" | "nothing")[] | undefined;
  readonly maintenance: Maintenance | undefined;
  /** Internal: a key intersection kept one symbolic side; a shape with this is not generalised. */
  readonly inexactKeys: boolean;
}

export interface InsertCore {
  readonly table: number;
  readonly columns: readonly string[] | undefined;
  readonly keyPosition: number | undefined;
  readonly rowKeys: readonly (KeyValue | undefined)[];
  readonly onConflict: "none" | "nothing" | "update";
}

const NO_FLAGS: StatementFlags = Object.freeze({
  assignsKey: false,
  volatileFunctions: Object.freeze([]) as readonly string[],
  userFunctions: Object.freeze([]) as readonly string[],
  locking: undefined,
  selectInto: false,
  writingCte: false,
  returning: false,
});

const EMPTY_WALK: WalkResult = {
  blocks: [],
  occurrences: [],
  predicates: [],
  links: [],
  insert: undefined,
  functions: { volatile: new Set(), user: new Set(), writing: false, advisory: false },
  sessionEffects: [],
  locking: undefined,
  selectInto: false,
  writingCte: false,
  assignsKey: false,
  returning: false,
  mergeActions: [],
  inexactKeys: false,
};

interface Shape {
  kind: StatementKind;
  command: string;
  readOnly: boolean;
  needsPrimary: PrimaryReason | undefined;
  transaction?: TransactionControl;
  effects?: SessionEffect[];
  walk?: WalkResult;
  explain?: { analyze: boolean };
  maintenance?: Maintenance;
}

/** Classifies one parsed statement. `node` undefined means an empty statement. */
export function classify(node: Node | undefined, schema: SchemaInfo): AnalysisCore {
  if (node === undefined) {
    return assemble({ kind: "empty", command: "", readOnly: true, needsPrimary: undefined }, node);
  }
  const shape = shapeOf(node, schema);
  const temporary = temporaryObjectCreated(node);
  if (temporary !== undefined && !shape.effects?.some((effect) => effect.kind === "create-temp"))
    shape.effects = [...(shape.effects ?? []), { kind: "create-temp", local: false, name: temporary }];
  return assemble(shape, node);
}

/** The walk of one parsed statement's tables and blocks (undefined: a statement that names none). */
export function walkOf(node: Node, schema: SchemaInfo): WalkResult | undefined {
  return shapeOf(node, schema).walk;
}

function dataStatement(node: Node, schema: SchemaInfo, kind: StatementKind, command: string): Shape {
  const walk = new StatementWalker(schema).walkTop(node);
  return { kind, command, walk, ...primaryOfData(kind, walk) };
}

function primaryOfData(kind: StatementKind, walk: WalkResult): Pick<Shape, "readOnly" | "needsPrimary"> {
  const reason: PrimaryReason | undefined =
    kind === "insert" || kind === "update" || kind === "delete" || kind === "merge"
      ? "writes"
      : walk.writingCte
        ? "writing-cte"
        : walk.locking !== undefined
          ? "locking-clause"
          : walk.selectInto
            ? "select-into"
            : walk.functions.advisory
              ? "advisory-lock"
              : walk.functions.writing
                ? "writing-function"
                : undefined;
  return { readOnly: reason === undefined, needsPrimary: reason };
}

/** A statement that only changes this session's state; one that a replica cannot run names its reason. */
function sessionStatement(command: string, effect: SessionEffect, needsPrimary?: PrimaryReason): Shape {
  return { kind: "session", command, readOnly: needsPrimary === undefined, needsPrimary, effects: [effect] };
}

function relationsOf(nodes: readonly Node[] | undefined): RangeVar[] {
  return (nodes ?? []).map((n) => nodeAs(n, "RangeVar")).filter((r) => r !== undefined);
}

function ddl(schema: SchemaInfo, command: string, relations: readonly RangeVar[]): Shape {
  const walk = new StatementWalker(schema).walkRelations(relations, "write");
  return { kind: "ddl", command, readOnly: false, needsPrimary: "ddl", walk };
}

function shapeOf(node: Node, schema: SchemaInfo): Shape {
  const tag = tagOf(node);
  const maintenance = maintenanceOf(node);
  if (maintenance !== undefined) {
    // Written like DDL: the tables' copies change (statistics, indexes, storage), not their rows.
    const walk = new StatementWalker(schema).walkRelations(maintenance.relations, "write");
    return {
      kind: tag === "IndexStmt" || tag === "DropStmt" ? "ddl" : "utility",
      command: maintenance.command,
      readOnly: false,
      needsPrimary: tag === "IndexStmt" || tag === "DropStmt" ? "ddl" : "writes",
      walk,
      maintenance: maintenance.maintenance,
    };
  }
  switch (tag) {
    case "SelectStmt":
      return dataStatement(
        node,
        schema,
        "select",
        nodeAs(node, "SelectStmt")?.intoClause !== undefined ? "SELECT INTO" : "SELECT",
      );
    case "InsertStmt":
      return dataStatement(node, schema, "insert", "INSERT");
    case "UpdateStmt":
      return dataStatement(node, schema, "update", "UPDATE");
    case "DeleteStmt":
      return dataStatement(node, schema, "delete", "DELETE");
    case "MergeStmt":
      return dataStatement(node, schema, "merge", "MERGE");
    case "CopyStmt": {
      const copy = nodeAs(node, "CopyStmt");
      const from = copy?.is_from === true;
      const walker = new StatementWalker(schema);
      const walk =
        copy?.relation !== undefined
          ? walker.walkRelations([copy.relation], from ? "write" : "read")
          : copy?.query !== undefined
            ? walker.walkTop(copy.query)
            : EMPTY_WALK;
      const inner = copy?.query === undefined ? undefined : primaryOfData("select", walk).needsPrimary;
      const needsPrimary: PrimaryReason | undefined = from ? "writes" : inner;
      return { kind: "copy", command: "COPY", readOnly: needsPrimary === undefined, needsPrimary, walk };
    }
    case "ExplainStmt": {
      const explain = nodeAs(node, "ExplainStmt");
      const analyze = (explain?.options ?? []).some((o) => {
        const d = nodeAs(o, "DefElem");
        return d?.defname === "analyze" && defElemTrue(d.arg);
      });
      if (explain?.query === undefined)
        return { kind: "explain", command: "EXPLAIN", readOnly: true, needsPrimary: undefined };
      const inner = shapeOf(explain.query, schema);
      const needsPrimary: PrimaryReason | undefined =
        analyze && inner.needsPrimary !== undefined ? "explain-analyze-write" : undefined;
      return {
        kind: "explain",
        command: "EXPLAIN",
        readOnly: needsPrimary === undefined,
        needsPrimary,
        explain: { analyze },
        ...(inner.walk === undefined ? {} : { walk: inner.walk }),
      };
    }
    case "TransactionStmt":
      return transactionShape(node);
    case "VariableSetStmt":
      return variableSetShape(node);
    case "VariableShowStmt":
      return { kind: "utility", command: "SHOW", readOnly: true, needsPrimary: undefined };
    case "ListenStmt":
      return sessionStatement(
        "LISTEN",
        { kind: "listen", local: false, name: nodeAs(node, "ListenStmt")?.conditionname ?? "" },
        "listen-notify",
      );
    case "UnlistenStmt": {
      const name = nodeAs(node, "UnlistenStmt")?.conditionname;
      return sessionStatement("UNLISTEN", {
        kind: "unlisten",
        local: false,
        ...(name === undefined ? {} : { name }),
      });
    }
    case "NotifyStmt":
      return { kind: "utility", command: "NOTIFY", readOnly: false, needsPrimary: "listen-notify" };
    case "PrepareStmt":
      return sessionStatement("PREPARE", {
        kind: "prepare",
        local: false,
        name: nodeAs(node, "PrepareStmt")?.name ?? "",
      });
    case "ExecuteStmt":
      return sessionStatement(
        "EXECUTE",
        { kind: "execute", local: false, name: nodeAs(node, "ExecuteStmt")?.name ?? "" },
        "unknown-statement",
      );
    case "DeallocateStmt": {
      const d = nodeAs(node, "DeallocateStmt");
      return sessionStatement("DEALLOCATE", {
        kind: "deallocate",
        local: false,
        ...(d?.isall === true || d?.name === undefined ? {} : { name: d.name }),
      });
    }
    case "DeclareCursorStmt": {
      const d = nodeAs(node, "DeclareCursorStmt");
      // CURSOR_OPT_HOLD: the cursor outlives the transaction, so the connection is this client's.
      const hold = ((d?.options ?? 0) & 0x0020) !== 0;
      const walk = d?.query === undefined ? EMPTY_WALK : new StatementWalker(schema).walkTop(d.query);
      const primary = primaryOfData("select", walk);
      return {
        kind: "utility",
        command: "DECLARE CURSOR",
        ...primary,
        walk,
        effects: hold ? [{ kind: "declare-with-hold", local: false, name: d?.portalname ?? "" }] : [],
      };
    }
    case "FetchStmt":
      return { kind: "utility", command: "FETCH", readOnly: true, needsPrimary: undefined };
    case "ClosePortalStmt": {
      // CLOSE ALL has no name: every cursor, WITH HOLD ones included, is gone.
      const name = nodeAs(node, "ClosePortalStmt")?.portalname;
      return {
        kind: "utility",
        command: "CLOSE CURSOR",
        readOnly: true,
        needsPrimary: undefined,
        effects: [{ kind: "close-cursor", local: false, ...(name === undefined ? {} : { name }) }],
      };
    }
    case "DiscardStmt": {
      const target = nodeAs(node, "DiscardStmt")?.target;
      const value =
        target === "DISCARD_PLANS"
          ? "plans"
          : target === "DISCARD_SEQUENCES"
            ? "sequences"
            : target === "DISCARD_TEMP"
              ? "temp"
              : "all";
      return sessionStatement("DISCARD", { kind: "discard", local: false, value });
    }
    case "LoadStmt":
      return sessionStatement("LOAD", {
        kind: "load",
        local: false,
        name: nodeAs(node, "LoadStmt")?.filename ?? "",
      });
    case "CallStmt":
      return { kind: "utility", command: "CALL", readOnly: false, needsPrimary: "call" };
    case "DoStmt":
      return { kind: "utility", command: "DO", readOnly: false, needsPrimary: "do-block" };
    case "CreateStmt": {
      const rel = nodeAs(node, "CreateStmt")?.relation;
      const shape = ddl(schema, "CREATE TABLE", rel === undefined ? [] : [rel]);
      if (rel?.relpersistence === "t")
        shape.effects = [{ kind: "create-temp", local: false, name: rel.relname ?? "" }];
      return shape;
    }
    case "CreateSeqStmt":
    case "ViewStmt": {
      // A temporary sequence or view lives on its connection, as a temporary table does.
      const rel =
        tag === "ViewStmt" ? nodeAs(node, "ViewStmt")?.view : nodeAs(node, "CreateSeqStmt")?.sequence;
      const shape: Shape = {
        kind: "ddl",
        command: commandOfTag(tag),
        readOnly: false,
        needsPrimary: "ddl",
      };
      if (rel?.relpersistence === "t")
        shape.effects = [{ kind: "create-temp", local: false, name: rel.relname ?? "" }];
      return shape;
    }
    case "CreateTableAsStmt": {
      const ctas = nodeAs(node, "CreateTableAsStmt");
      const rel = ctas?.into?.rel;
      const walk =
        ctas?.query === undefined
          ? new StatementWalker(schema).walkRelations(rel === undefined ? [] : [rel], "write")
          : new StatementWalker(schema).walkTop(ctas.query);
      const command = ctas?.objtype === "OBJECT_MATVIEW" ? "CREATE MATERIALIZED VIEW" : "CREATE TABLE AS";
      return {
        kind: "ddl",
        command,
        readOnly: false,
        needsPrimary: "ddl",
        walk,
        ...(rel?.relpersistence === "t"
          ? { effects: [{ kind: "create-temp", local: false, name: rel.relname ?? "" }] }
          : {}),
      };
    }
    case "AlterTableStmt": {
      const rel = nodeAs(node, "AlterTableStmt")?.relation;
      return ddl(schema, "ALTER TABLE", rel === undefined ? [] : [rel]);
    }
    case "IndexStmt": {
      const rel = nodeAs(node, "IndexStmt")?.relation;
      return ddl(schema, "CREATE INDEX", rel === undefined ? [] : [rel]);
    }
    case "TruncateStmt":
      return ddl(schema, "TRUNCATE TABLE", relationsOf(nodeAs(node, "TruncateStmt")?.relations));
    case "DropStmt": {
      const drop = nodeAs(node, "DropStmt");
      const relations: RangeVar[] =
        drop?.removeType === "OBJECT_TABLE"
          ? (drop.objects ?? []).map((o) => {
              const names = (nodeAs(o, "List")?.items ?? []).map(stringValue);
              const relname = names[names.length - 1] ?? "";
              const schemaname = names.length > 1 ? names[names.length - 2] : undefined;
              return { relname, inh: true, ...(schemaname === undefined ? {} : { schemaname }) };
            })
          : [];
      return ddl(schema, "DROP", relations);
    }
    default:
      if (
        tag.startsWith("Create") ||
        tag.startsWith("Alter") ||
        tag.startsWith("Drop") ||
        DDL_TAGS.has(tag)
      ) {
        return { kind: "ddl", command: commandOfTag(tag), readOnly: false, needsPrimary: "ddl" };
      }
      return {
        kind: "utility",
        command: commandOfTag(tag),
        readOnly: false,
        needsPrimary: "unknown-statement",
      };
  }
}

const DDL_TAGS: ReadonlySet<string> = new Set([
  "ViewStmt",
  "IndexStmt",
  "RenameStmt",
  "CommentStmt",
  "GrantStmt",
  "GrantRoleStmt",
  "DefineStmt",
  "CompositeTypeStmt",
  "RuleStmt",
  "SecLabelStmt",
  "ReassignOwnedStmt",
]);

function commandOfTag(tag: string): string {
  return tag
    .replace(/Stmt$/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toUpperCase();
}

function defElemTrue(arg: Node | undefined): boolean {
  if (arg === undefined) return true;
  const c = nodeAs(arg, "A_Const");
  if (c?.boolval !== undefined) return c.boolval.boolval === true;
  if (c?.ival !== undefined) return (c.ival.ival ?? 0) !== 0;
  const s = stringValue(arg) ?? c?.sval?.sval;
  if (s !== undefined) return ["true", "on", "yes", "1"].includes(s.toLowerCase());
  return true;
}

const TRANSACTION_ACTION_OF: Readonly<Record<string, TransactionAction>> = {
  TRANS_STMT_BEGIN: "begin",
  TRANS_STMT_START: "begin",
  TRANS_STMT_COMMIT: "commit",
  TRANS_STMT_ROLLBACK: "rollback",
  TRANS_STMT_SAVEPOINT: "savepoint",
  TRANS_STMT_RELEASE: "release",
  TRANS_STMT_ROLLBACK_TO: "rollback-to",
  TRANS_STMT_PREPARE: "prepare",
  TRANS_STMT_COMMIT_PREPARED: "commit-prepared",
  TRANS_STMT_ROLLBACK_PREPARED: "rollback-prepared",
};

const COMMAND_OF_ACTION: Readonly<Record<TransactionAction, string>> = {
  begin: "BEGIN",
  commit: "COMMIT",
  rollback: "ROLLBACK",
  savepoint: "SAVEPOINT",
  release: "RELEASE",
  "rollback-to": "ROLLBACK",
  prepare: "PREPARE TRANSACTION",
  "commit-prepared": "COMMIT PREPARED",
  "rollback-prepared": "ROLLBACK PREPARED",
};

const ISOLATION_OF: Readonly<Record<string, IsolationLevel>> = {
  "read uncommitted": "read-uncommitted",
  "read committed": "read-committed",
  "repeatable read": "repeatable-read",
  serializable: "serializable",
};

function transactionOptions(options: readonly Node[] | undefined): Partial<TransactionControl> {
  const out: { readOnly?: boolean; isolation?: IsolationLevel; deferrable?: boolean } = {};
  for (const o of options ?? []) {
    const d = nodeAs(o, "DefElem");
    if (d === undefined) continue;
    const c = nodeAs(d.arg, "A_Const");
    switch (d.defname) {
      case "transaction_isolation": {
        const level = ISOLATION_OF[(c?.sval?.sval ?? "").toLowerCase()];
        if (level !== undefined) out.isolation = level;
        break;
      }
      case "transaction_read_only":
        out.readOnly = (c?.ival?.ival ?? 0) !== 0;
        break;
      case "transaction_deferrable":
        out.deferrable = (c?.ival?.ival ?? 0) !== 0;
        break;
      default:
        break;
    }
  }
  return out;
}

function transactionShape(node: Node): Shape {
  const t = nodeAs(node, "TransactionStmt");
  const action = TRANSACTION_ACTION_OF[t?.kind ?? ""] ?? "begin";
  const name = t?.savepoint_name ?? t?.gid;
  const transaction: TransactionControl = {
    action,
    ...(action === "begin" ? transactionOptions(t?.options) : {}),
    ...(name === undefined ? {} : { name }),
    ...(t?.chain === true ? { chain: true } : {}),
  };
  // PREPARE TRANSACTION and its resolution write the two-phase state; BEGIN READ WRITE is refused
  // by a standby.
  const primary =
    action === "prepare" ||
    action === "commit-prepared" ||
    action === "rollback-prepared" ||
    transaction.readOnly === false;
  return {
    kind: "transaction",
    // START TRANSACTION is its own command tag; END and ABORT report COMMIT and ROLLBACK.
    command: t?.kind === "TRANS_STMT_START" ? "START TRANSACTION" : COMMAND_OF_ACTION[action],
    readOnly: !primary,
    needsPrimary: primary ? "transaction-control" : undefined,
    transaction,
  };
}

function settingValue(args: readonly Node[] | undefined): string | undefined {
  const first = args?.[0];
  if (first === undefined) return undefined;
  const v = keyValueOf(first);
  if (v?.kind === "literal") return v.text;
  return undefined;
}

function variableSetShape(node: Node): Shape {
  const v = nodeAs(node, "VariableSetStmt");
  const local = v?.is_local === true;
  const name = v?.name;
  switch (v?.kind) {
    case "VAR_SET_MULTI": {
      // SET TRANSACTION ... applies to the current transaction only; SET SESSION CHARACTERISTICS lasts.
      const sessionWide = name === "SESSION CHARACTERISTICS";
      return sessionStatement("SET", {
        kind: "set",
        local: !sessionWide,
        name: sessionWide ? "session_characteristics" : "transaction",
      });
    }
    case "VAR_RESET":
      return sessionStatement("RESET", {
        kind: "reset",
        local: false,
        ...(name === undefined ? {} : { name }),
      });
    case "VAR_RESET_ALL":
      return sessionStatement("RESET", { kind: "reset", local: false });
    default: {
      const value =
        v?.kind === "VAR_SET_DEFAULT"
          ? "default"
          : v?.kind === "VAR_SET_CURRENT"
            ? "current"
            : settingValue(v?.args);
      return sessionStatement("SET", {
        kind: "set",
        local,
        ...(name === undefined ? {} : { name }),
        ...(value === undefined ? {} : { value }),
      });
    }
  }
}

function maxParam(node: unknown): number {
  let max = 0;
  const visit = (n: unknown): void => {
    if (n === null || typeof n !== "object") return;
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    const record = n as Record<string, unknown>;
    const param = record["ParamRef"] as { number?: number } | undefined;
    if (param !== undefined && (param.number ?? 0) > max) max = param.number ?? 0;
    for (const k in record) visit(record[k]);
  };
  visit(node);
  return max;
}

function assemble(shape: Shape, node: Node | undefined): AnalysisCore {
  const walk = shape.walk ?? EMPTY_WALK;
  const tables: TableRef[] = walk.occurrences.map((o) => ({
    name: o.name,
    only: o.only,
    block: o.block,
    access: o.access,
    key: o.key,
    ...(o.schema === undefined ? {} : { schema: o.schema }),
    ...(o.alias === undefined ? {} : { alias: o.alias }),
    ...(o.keyColumn === undefined ? {} : { keyColumn: o.keyColumn }),
  }));
  const blocks: QueryBlock[] = walk.blocks.map((b) => ({
    id: b.id,
    parent: b.parent,
    role: b.role,
    correlated: b.correlated,
    aggregates: b.aggregates,
    writes: b.writes,
  }));
  const flags: StatementFlags =
    shape.walk === undefined
      ? NO_FLAGS
      : {
          assignsKey: walk.assignsKey,
          volatileFunctions: [...walk.functions.volatile].sort(),
          userFunctions: [...walk.functions.user].sort(),
          locking: walk.locking,
          selectInto: walk.selectInto,
          writingCte: walk.writingCte,
          returning: walk.returning,
        };
  const insert = walk.insert;
  const insertRows: InsertCore | undefined =
    insert?.rowKeys === undefined
      ? undefined
      : {
          table: insert.table,
          columns: insert.columns,
          keyPosition: insert.keyPosition,
          rowKeys: insert.rowKeys,
          onConflict: insert.onConflict,
        };
  return {
    kind: shape.kind,
    command: shape.command,
    readOnly: shape.readOnly,
    needsPrimary: shape.needsPrimary,
    transaction: shape.transaction,
    sessionEffects: [...(shape.effects ?? []), ...walk.sessionEffects],
    blocks,
    tables,
    links: walk.links,
    crossJoins: crossJoinsOf(tables, walk.links),
    flags,
    insertRows,
    paramCount: node === undefined ? 0 : maxParam(node),
    explain: shape.explain,
    maintenance: shape.maintenance,
    mergeActions: shape.kind === "merge" ? walk.mergeActions : undefined,
    inexactKeys: walk.inexactKeys,
  };
}

/** Keyed occurrences whose rows are not tied together by a chain of key equalities. */
function crossJoinsOf(tables: readonly TableRef[], links: WalkResult["links"]): CrossJoin[] {
  const parent = tables.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] ?? r;
    return r;
  };
  for (const l of links) parent[find(l.left)] = find(l.right);
  const keyed = tables.map((t, i) => (t.keyColumn === undefined ? -1 : i)).filter((i) => i >= 0);
  const out: CrossJoin[] = [];
  for (let a = 0; a < keyed.length; a++) {
    for (let b = a + 1; b < keyed.length; b++) {
      const left = keyed[a] ?? 0;
      const right = keyed[b] ?? 0;
      if (find(left) !== find(right)) out.push({ left, right });
    }
  }
  return out;
}
